"""
What a controller reports: the last commanded tick for action goals, a status snapshot (no ROS).

:class:`ControllerReports` holds the :class:`~spart_ros.control.controller.Controller`'s read-only
reports (a mixin: they read its units, nothing here changes them): :meth:`~ControllerReports.
feedback` (the last commanded tick, for a trajectory action's feedback),
:meth:`~ControllerReports.trajectory_remaining`, :meth:`~ControllerReports.state_age` and
:meth:`~ControllerReports.snapshot` (what a status message says).
"""

import numpy as np

from .tick import Snapshot

__all__ = ['ControllerReports']


class ControllerReports:
    """The reports of a Controller (see the module docstring); mixed into it."""

    def feedback(self):
        """
        Return the :data:`Feedback` of the last commanded tick.

        None before one, or for a mode without a joint reference (an end-effector mode; one that
        follows none, such as gravity_compensation, whose law ignores the hold it is given).
        """
        law = self.law
        return self.reference.feedback() if law is None or law.follows != 'none' else None

    def trajectory_remaining(self, t):
        """Return the seconds to the end of the followed (or queued) trajectory at time ``t``."""
        return self.reference.remaining(t)

    def state_age(self, inputs):
        """Return the age (s) of the oldest of ``inputs`` a command needs (-1: one never came)."""
        return self.supervision.state_age(inputs)

    def snapshot(self, t=None):
        """
        Return the :data:`Snapshot` for a status message.

        State, reason, per command joint the errors (reference - measured, at the last command) and
        the last efforts sent, counters; ``t``: the control time (default: the last tick's).
        """
        fb = self.feedback()
        idx = self.controlled.index if self.controlled is not None else np.zeros(0, np.intp)
        if fb is not None and len(idx):
            pos, vel = fb.error[0][idx], fb.error[1][idx]
        else:
            pos = vel = np.zeros(len(idx))
        g = self.gate
        counts = dict(
            self.counts,
            commands=g.commands,
            zeros=g.zeros,
            timeouts=g.timeouts,
            rejected=g.rejected,
            recoveries=g.recoveries,
        )
        return Snapshot(
            self.state,
            self.reason,
            self.active,
            self.commanding,
            list(self.joint_names),
            pos,
            vel,
            np.array(self.supervision.efforts),
            self.trajectory_remaining(t),
            self.compute_time,
            counts,
            self.details,
            self.actuation,
            self.controlled.saturation if self.controlled is not None else None,
        )
