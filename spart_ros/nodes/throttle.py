"""Publication rate and log throttling for the nodes (pure Python, no rclpy)."""

import math

from .config import ConfigError

__all__ = ['Decimator', 'LogLimiter']


class Decimator:
    """
    Publish one output set per ``every`` inputs, and at most ``max_rate`` per second.

    ``max_rate`` 0 = no limit; ``now`` in seconds (any monotonic clock).
    """

    def __init__(self, every=1, max_rate=0.0):
        if int(every) < 1:
            raise ConfigError(f'decimation must be >= 1, got {every}')
        if not math.isfinite(float(max_rate)) or float(max_rate) < 0:
            raise ConfigError(f'max_rate must be >= 0 (0 = no limit), got {max_rate}')
        self.every = int(every)
        self.period = 1.0 / float(max_rate) if max_rate else 0.0
        self._count = 0
        self._last = -math.inf

    def __call__(self, now):
        self._count += 1
        if self._count < self.every:
            return False
        if self.period and now - self._last < self.period * (1 - 1e-6):
            return False
        self._count = 0
        self._last = now
        return True


class LogLimiter:
    """
    ``allow(key, now)``: True the first time and then at most once per ``period`` s per key.

    ``period`` None: only once ever.
    """

    def __init__(self, period=5.0):
        self.period = period
        self._last = {}

    def allow(self, key, now):
        last = self._last.get(key)
        if last is not None and (self.period is None or now - last < self.period):
            return False
        self._last[key] = now
        return True
