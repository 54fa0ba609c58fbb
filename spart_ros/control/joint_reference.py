"""
The joint reference a controller follows, and the last tick it commanded (pure Python, no ROS).

:class:`JointReference` holds the :class:`~spart_ros.control.trajectory.ReferenceSchedule` (the
trajectory or hold followed now, and those queued to start later) and remembers the state, the
reference and the control time of the last command: what the rules about resets, jumps and
stalls compare a new state with (:mod:`.continuity`), what a goal starts from
(:mod:`.goal_manager`) and what feedback reports.  It decides nothing.

``hold_pending``: the reference is to be set by holding the pose measured at the next tick (after
an activation, a reset, a jump, a halt far from the reference, a cleared fault); until then there
is no schedule to follow or to start a goal from.
"""

from .tick import Feedback
from .trajectory import hold, ReferenceSchedule

__all__ = ['JointReference']


class JointReference:
    """
    The reference schedule and the last commanded tick (see the module docstring).

    ``schedule``: the ReferenceSchedule (None before the first hold); ``last_t`` (s), ``last_q``,
    ``last_qd`` (n,), ``last_base``, ``last_ref``: the control time, measured state and reference
    of the last command (None before one; ``last_q`` None also right after a hold is set: no jump
    is judged across a hold).
    """

    def __init__(self):
        self.reset()

    def reset(self):
        """Per activation: no reference, the next fresh state is held."""
        self.schedule = None
        self.hold_pending = True
        self.last_t = None
        self.last_q = self.last_qd = None
        self.last_base = None
        self.last_ref = None

    @property
    def ready(self):
        """Whether a reference is followed (a goal can start from it now)."""
        return not self.hold_pending and self.schedule is not None

    def hold_next(self):
        """Drop the reference: the pose measured at the next tick is held."""
        self.hold_pending = True

    def take_hold(self, t, q):
        """Hold the measured pose ``q`` (n,) from control time ``t`` (the pending hold is set)."""
        self.hold_pending = False
        self.schedule = ReferenceSchedule(hold(t, q.copy()))
        self.last_q = None  # no jump check across a hold

    def hold(self, t, position):
        """Follow a hold of ``position`` (n,) from control time ``t`` instead of the schedule."""
        self.schedule = ReferenceSchedule(hold(t, position))

    def at(self, t):
        """
        Return the Reference followed at control time ``t``.

        The trajectories replaced before ``t`` are forgotten.
        """
        schedule = self.schedule
        ref = schedule.sample(t)
        schedule.advance(t)
        return ref

    def sample(self, t):
        """Return the Reference of the schedule at control time ``t``."""
        return self.schedule.sample(t)

    def samples(self, times, out):
        """Write the schedule's references at control times ``times`` into ``out`` (q, qd, qdd)."""
        self.schedule.samples(times, out)

    def follow(self, trajectory):
        """Follow ``trajectory`` from its start time on (the schedule's ``replace``)."""
        self.schedule.replace(trajectory)

    def remember(self, state, ref, t):
        """Remember the commanded tick: ``state`` (q, qd, base), reference ``ref``, time ``t``."""
        if self.last_q is None:
            self.last_q, self.last_qd = state.q.copy(), state.qd.copy()
        else:  # (an assignment: a third of np.copyto's cost)
            self.last_q[...] = state.q
            self.last_qd[...] = state.qd
        self.last_t = t
        self.last_base = state.base
        self.last_ref = ref

    def feedback(self):
        """
        Return the :data:`~spart_ros.control.tick.Feedback` of the last commanded tick.

        None before one, or when it followed no joint reference.
        """
        ref = self.last_ref
        if ref is None or self.last_q is None:
            return None
        q, qd = self.last_q, self.last_qd
        return Feedback(self.last_t, ref, (q, qd), (ref.position - q, ref.velocity - qd))

    def remaining(self, t):
        """Return the seconds to the end of the followed (or queued) trajectory at time ``t``."""
        schedule = self.schedule
        return max(0.0, schedule.end_time - t) if schedule is not None and t is not None else 0.0
