"""
Time scalings of a point-to-point motion (Modern Robotics, ch. 9.2).

The path parameter s(t) from 0 at t = 0 to 1 at t = duration, at rest at both ends.

- cubic: s = 3 tau^2 - 2 tau^3 (zero velocity at both ends, acceleration steps at the ends);
- quintic: s = 10 tau^3 - 15 tau^4 + 6 tau^5 (zero velocity and acceleration at both ends);

with tau = t / duration.  Each returns a :data:`TimeScaling` (s, ds/dt, d2s/dt2); before 0,
s = 0 and after the duration, s = 1, both at rest.  MR's ``CubicTimeScaling(Tf, t)`` and
``QuinticTimeScaling(Tf, t)`` are ``.s`` of these (:mod:`spart_ros.modern_robotics`).
"""

from collections import namedtuple

from ..core import checks as chk
from ..core.errors import InputError

__all__ = [
    'TimeScaling',
    'cubic_time_scaling',
    'quintic_time_scaling',
    'time_scaling',
    'SCALINGS',
    'check_duration',
]

TimeScaling = namedtuple('TimeScaling', 's s_dot s_ddot')
TimeScaling.__doc__ = (
    """The path parameter s (0..1) at a time, its rate [1/s] and its second derivative [1/s^2]."""
)


def check_duration(duration, name='duration'):
    """Return ``duration`` as a float > 0 (finite); InputError naming ``name`` otherwise."""
    d = chk.nonnegative(name, duration)
    if not d > 0:
        raise InputError(f'{name}: expected a duration > 0 s, got {chk.given(duration)}')
    return d


def _tau(duration, t):
    T = check_duration(duration)
    t = chk.scalar('t', t)
    if not isinstance(t, float):
        raise InputError(f't: expected a time in seconds (a number), got {chk.given(t)}')
    return T, t / T


def cubic_time_scaling(duration, t):
    """Return the :data:`TimeScaling` of the cubic s = 3 tau^2 - 2 tau^3, tau = t/``duration``."""
    T, tau = _tau(duration, t)
    if not 0.0 < tau < 1.0:
        return TimeScaling(0.0 if tau <= 0.0 else 1.0, 0.0, 0.0)
    return TimeScaling(
        tau * tau * (3.0 - 2.0 * tau), 6.0 * tau * (1.0 - tau) / T, (6.0 - 12.0 * tau) / (T * T)
    )


def quintic_time_scaling(duration, t):
    """
    Return the :data:`TimeScaling` of the quintic.

    s = 10 tau^3 - 15 tau^4 + 6 tau^5, tau = t / ``duration`` [s].
    """
    T, tau = _tau(duration, t)
    if not 0.0 < tau < 1.0:
        return TimeScaling(0.0 if tau <= 0.0 else 1.0, 0.0, 0.0)
    t2 = tau * tau
    return TimeScaling(
        t2 * tau * (10.0 - 15.0 * tau + 6.0 * t2),
        30.0 * t2 * (1.0 - tau) ** 2 / T,
        60.0 * tau * (1.0 - tau) * (1.0 - 2.0 * tau) / (T * T),
    )


SCALINGS = {'cubic': cubic_time_scaling, 'quintic': quintic_time_scaling}


def time_scaling(kind):
    """
    Return the time scaling function named ``kind``.

    'cubic' or 'quintic'; MR's method 3 or 5.
    """
    if isinstance(kind, (int,)) and not isinstance(kind, bool) and kind in (3, 5):
        kind = 'cubic' if kind == 3 else 'quintic'
    if not isinstance(kind, str) or kind not in SCALINGS:
        raise InputError(
            "scaling: expected 'cubic' or 'quintic' (or MR's method 3 or 5), got "
            f'{chk.given(kind)}'
        )
    return SCALINGS[kind]
