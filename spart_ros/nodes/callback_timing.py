"""Durations of a node callback, logged as percentiles (pure Python, no rclpy)."""

import time

import numpy as np

__all__ = ['CallbackTiming']


class CallbackTiming:
    """Durations of the joint_states callback, logged as percentiles every ``period`` s."""

    def __init__(self, period):
        self.period = period
        self.samples = np.zeros(100_000)
        self.n = 0
        self.next = time.monotonic() + period

    def add(self, dt, logger):
        if self.n < len(self.samples):
            self.samples[self.n] = dt
            self.n += 1
        now = time.monotonic()
        if now >= self.next and self.n:
            d = self.samples[: self.n] * 1e3
            logger.info(
                f'joint_states callback over {self.n} messages [ms]: p50 '
                f'{np.percentile(d, 50):.3f} p99 {np.percentile(d, 99):.3f} max {d.max():.3f}'
            )
            self.n = 0
            self.next = now + self.period
