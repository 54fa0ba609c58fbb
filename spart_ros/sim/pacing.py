"""Real-time pacing: how many fixed physics steps keep simulated time with the wall clock."""

import math

from ..core.errors import InputError

__all__ = ['RealTimePacer']


class RealTimePacer:
    """
    Simulated time follows ``real_time_factor`` x wall time from an anchor.

    :meth:`steps_due` (called whenever convenient, e.g. from a timer) returns how many steps
    of ``dt`` bring the simulation up to the wall clock.  When the simulation falls more
    than ``max_lag`` seconds of simulated time behind (a slow machine, a stalled process), it
    takes at most that many seconds' worth of steps and moves the anchor: the lost time is
    given up (counted in ``slipped``) instead of being caught up in a burst.
    All times in seconds; ``wall`` from any monotonic clock.
    """

    def __init__(self, dt, real_time_factor=1.0, max_lag=0.1):
        for name, value in (
            ('dt', dt),
            ('real_time_factor', real_time_factor),
            ('max_lag', max_lag),
        ):
            if not math.isfinite(float(value)) or float(value) <= 0.0:
                raise InputError(f'{name} must be a positive number, got {value}')
        self.dt = float(dt)
        self.real_time_factor = float(real_time_factor)
        self.max_steps = max(1, int(math.ceil(float(max_lag) / self.dt)))
        self.slipped = 0.0
        self._wall0 = self._sim0 = None

    def restart(self, wall, sim_time):
        """Anchor: simulated time ``sim_time`` at wall time ``wall`` (at start, after a pause)."""
        self._wall0, self._sim0 = float(wall), float(sim_time)

    def steps_due(self, wall, sim_time):
        """
        Return the steps to take now (>= 0) so that ``sim_time`` reaches the paced target.

        ``wall``: the wall clock now (s); ``sim_time``: the simulated time now (s).
        """
        if self._wall0 is None:
            self.restart(wall, sim_time)
        target = self._sim0 + (wall - self._wall0) * self.real_time_factor
        n = int(math.floor((target - sim_time) / self.dt + 1e-6))
        if n <= self.max_steps:
            return max(n, 0)
        self.slipped += (n - self.max_steps) * self.dt
        self.restart(wall, sim_time + self.max_steps * self.dt)
        return self.max_steps
