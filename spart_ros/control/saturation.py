"""
Effort saturation: which command joints the effort limits clamp, what the law asked (pure Python).

A :class:`ControlledRobot <spart_ros.control.controlled_robot.ControlledRobot>` clamps every
command to its joints' effort limits (``effort_limits``, else the URDF's ``<limit effort>``).  A
clamped command is not what the law computed: the robot then follows the reference less well, and
a robot whose limits cannot give what a motion needs (or what gravity needs to hold it) ends in a
tracking fault.  :class:`EffortSaturation` watches the clamping so that it is said, not found:

- at each command, the joints clamped, the effort asked and the limit (the controller's status:
  ``saturated_joints``, ``saturated_demand``, ``saturated_limit``, ``saturated_commands``);
- a log line when a run of clamped commands starts, and at most one every :data:`LOG_PERIOD` s
  of control time (the largest demand of each joint since the run began);
- :meth:`EffortSaturation.recent`: a tracking fault that follows saturation (within
  :data:`WINDOW` s) says so, naming the joints, the demand and the limit.

Per command it costs one comparison of the clamped command with the law's (the clamp itself is
the controlled robot's); the rest runs only while efforts are clamped.
"""

import numpy as np

from ..core.model import PRISMATIC

__all__ = ['EffortSaturation', 'WINDOW', 'LOG_PERIOD', 'effort_unit']

#: s: a tracking fault this soon after a clamped command follows saturation
WINDOW = 1.0
#: s of control time between two log lines of one run of clamped commands
LOG_PERIOD = 1.0


def effort_unit(joint_type):
    """
    Return the unit of a joint's effort: 'N' for a prismatic joint, 'N m' otherwise.

    ``joint_type``: a core joint's ``type`` (:data:`spart_ros.core.model.PRISMATIC`...) or its
    URDF name.
    """
    return 'N' if joint_type in (PRISMATIC, 'prismatic') else 'N m'


class EffortSaturation:
    """
    The effort saturation of one controlled robot's command joints (see the module docstring).

    ``joint_names`` (m,) the command joints, ``units`` (m,) their effort units ('N m' or 'N');
    ``notify(level, key, text)``: where the log lines go (None: nowhere).  After each command
    (:meth:`update`): ``joints`` (names clamped at the last command, command order), ``demand``
    and ``limit`` (their efforts asked and their limits, same order), ``count`` (commands with an
    effort clamped, since this object was made), ``since`` (control time of the first command of
    the current or last run of clamped commands), ``last_t`` (of the last clamped command; both
    None before one), ``active`` (the last command had one clamped).
    """

    def __init__(self, joint_names, units, notify=None):
        self.joint_names, self.units = list(joint_names), list(units)
        self._notify = notify
        m = len(self.joint_names)
        self._clamped = np.zeros(m, dtype=bool)
        self._peak = np.zeros(m)  # largest |demand| of each joint over the current run
        self._run = np.zeros(m, dtype=bool)  # the joints clamped at least once in the run
        self._limits = np.zeros(m)
        self.count = 0
        self.joints, self.demand, self.limit = [], np.zeros(0), np.zeros(0)
        self.since = self.last_t = None
        self._logged = None
        self.active = False  # the last command had an effort clamped

    def update(self, demand, clamped, limits, t=None):
        """
        Take one command: ``demand`` (m,) the efforts the law asked, ``clamped`` (m,) bool.

        ``limits`` (m,): the limits it was clamped to; ``t``: its control time (s; None: the log
        is not repeated).  Called with ``clamped`` all False only when the previous command had
        one clamped (:attr:`active`): that ends the run.
        """
        if not clamped.any():
            self._end(t)
            return
        np.copyto(self._clamped, clamped)
        a = np.abs(demand)
        if not self.active:
            self._peak[:] = 0.0
            self._run[:] = False
            self.since = t
        np.maximum(self._peak, np.where(clamped, a, 0.0), out=self._peak)
        self._run |= clamped
        np.copyto(self._limits, limits)
        self.joints = [n for n, c in zip(self.joint_names, clamped) if c]
        self.demand, self.limit = demand[clamped].copy(), limits[clamped].copy()
        self.count += 1
        self.last_t = t
        first = not self.active
        self.active = True
        # one line per LOG_PERIOD of control time, a run's first included (a joint chattering at
        # its limit starts a run every other tick); a clock that went back allows one at once
        due = t is None or self._logged is None or not 0.0 <= t - self._logged < LOG_PERIOD
        if due:
            self._logged = t
            self._say(
                'warning',
                'saturation',
                ('efforts clamped at their limits: ' if first else 'efforts still clamped: ')
                + self.describe()
                + ' (the law asks more than the limits give: raise effort_limits or the URDF '
                '<limit effort>, or slow the motion)',
            )

    def _end(self, t):
        if self.active:
            self.active = False
            self.joints, self.demand, self.limit = [], np.zeros(0), np.zeros(0)

    def describe(self):
        """Return the joints clamped in the current (or last) run, largest demand and limit."""
        return ', '.join(
            f'{n} asked {p:.4g} {u}, limit {lim:.4g} {u}'
            for n, u, p, lim, r in zip(
                self.joint_names, self.units, self._peak, self._limits, self._run
            )
            if r
        )

    def recent(self, t):
        """
        Return what a tracking fault at control time ``t`` follows, or '' (no recent saturation).

        A clamped command within :data:`WINDOW` s before ``t``: the joints, their largest demand
        and their limits since that run of clamped commands began.
        """
        if self.last_t is None or t is None or t - self.last_t > WINDOW:
            return ''
        since = f' from t = {self.since:.3f} s' if self.since is not None else ''
        return f'its efforts were clamped at their limits{since} ({self.describe()})'

    def _say(self, level, key, text):
        if self._notify is not None:
            self._notify(level, key, text)
