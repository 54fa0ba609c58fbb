"""
The capture of a target in the offline closed loop: what :func:`~.closed_loop.simulate` adds.

With ``simulate(..., target=...)`` the plant has the target (:mod:`.target_body`), the controller
a capture unit on the same declaration (:mod:`spart_ros.control.capture_control`), and at each
tick :class:`CaptureLoop`

- gives the controller an estimate of the target every ``estimate_period`` s: the plant's
  odometry of the target's link frame (in LVLH with an orbit, as ``spart_sim`` publishes it), with
  optional white noise (``estimate_noise``: standard deviations of the position [m], the attitude
  [rad, a rotation vector in l], the linear and the angular velocity [m/s, rad/s, in l]), stamped
  ``estimate_delay`` s late (the estimate of t - delay, given at t);
- submits the capture goal at its ``start`` (the first tick at or after it when the controller
  commands and has an estimate), and when the capture asks for the grasp, welds the target in
  the plant where it is and tells the controller what the weld holds (``spart_sim`` does the
  same over topics);
- records, per tick: the distance from the end-effector point to the fixture (the plant's truth),
  the phase, the relative twist at the fixture (the capture's feedback), the target's pose and
  twist, robot + target momentum, the wheels' momentum (:class:`CaptureRecord`).

Pure Python; no ROS.
"""

from dataclasses import dataclass, field

import numpy as np

from .target_body import PoseEstimator, SETTLE as MUJOCO_SETTLE, system_momentum
from ..control.capture_goal import CaptureGoal, CaptureRefused
from ..control.grasp import GraspTolerances
from ..core.errors import InputError, SpartError

__all__ = ['CaptureLoop', 'CaptureRecord', 'capture_options', 'MUJOCO_SETTLE']


#: keys of simulate's ``capture`` mapping besides the CaptureGoal's fields
_LOOP_KEYS = ('start', 'estimate_period', 'estimate_noise', 'estimate_delay', 'seed')
_TOLERANCE_KEYS = ('position', 'orientation', 'linear', 'angular', 'dwell')


@dataclass
class CaptureRecord:
    """
    A capture in an offline run: per tick (the run's ``t`` rows) and what became of it.

    ``distance`` (k,) [m]: the end-effector point to the fixture (the plant's truth);
    ``phase`` (k,): the capture's phase after the tick ('idle' before the goal);
    ``relative_linear``, ``relative_angular`` (k,) [m/s, rad/s]: the relative twist at the fixture
    of the capture's feedback (NaN without one); ``target_position`` (k, 3), ``target_rotation``
    (k, 3, 3): the target's link frame in the world (LVLH with an orbit); ``target_twist`` (k, 6)
    [linear; angular] of l in l; ``momentum`` (k, 6): robot + target [L about N's origin; P] (N);
    ``wheel_momentum`` (k, 3): the wheels' momentum relative to the base, in b (zeros without
    wheels); ``goal``: the :class:`~spart_ros.control.capture_goal.CaptureGoal`; ``grasp``: the
    plant's :data:`~spart_ros.sim.target_body.Grasp` (None without one); ``refused``: why the goal
    was refused ('' if it was not); ``started``: reserved ({phase: time}, the goal's own is
    ``goal.started``).
    """

    distance: np.ndarray
    phase: np.ndarray
    relative_linear: np.ndarray
    relative_angular: np.ndarray
    target_position: np.ndarray
    target_rotation: np.ndarray
    target_twist: np.ndarray
    momentum: np.ndarray
    wheel_momentum: np.ndarray
    goal: object = None
    grasp: object = None
    refused: str = ''
    started: dict = field(default_factory=dict)

    def phase_times(self, t):
        """Return {phase: control time [s] it started} of this capture, from the run's ``t``."""
        out = {}
        for k, p in enumerate(self.phase):
            out.setdefault(str(p), float(t[k]))
        return out


def capture_options(capture):
    """
    Return (CaptureGoal, loop options) of simulate's ``capture`` argument.

    ``capture``: a CaptureGoal, a mapping of its fields (``tolerances`` a mapping of
    GraspTolerances' fields or a GraspTolerances) and of :data:`_LOOP_KEYS`, True or None (a
    default goal), False (no goal).  InputError naming an unknown key.
    """
    if capture is False:
        return None, {}
    if capture is None or capture is True:
        return CaptureGoal(), {}
    if isinstance(capture, CaptureGoal):
        return capture, {}
    if not isinstance(capture, dict):
        raise InputError(f'capture: expected a CaptureGoal, a mapping or a bool, got {capture!r}')
    goal_keys = set(CaptureGoal.__dataclass_fields__) - {
        'status',
        'message',
        'error_code',
        'phase',
        'feedback',
        'plan',
        'id',
        'started',
    }
    unknown = sorted(set(capture) - goal_keys - set(_LOOP_KEYS))
    if unknown:
        raise InputError(
            f'capture: unknown keys {unknown} (known: {sorted(goal_keys | set(_LOOP_KEYS))})'
        )
    fields = {k: v for k, v in capture.items() if k in goal_keys}
    tol = fields.get('tolerances')
    if isinstance(tol, dict):
        extra = sorted(set(tol) - set(_TOLERANCE_KEYS))
        if extra:
            raise InputError(
                f'capture.tolerances: unknown keys {extra} (known: {_TOLERANCE_KEYS})'
            )
        fields['tolerances'] = GraspTolerances(**tol)
    return CaptureGoal(**fields), {k: capture[k] for k in _LOOP_KEYS if k in capture}


class CaptureLoop:
    """
    The target's side of one offline run (see the module docstring).

    ``controller``: the configured, active Controller (its ``capture`` unit); ``plant``: the
    plant (its ``target``); ``goal``: the CaptureGoal or None; ``rows``: ticks recorded (1: the
    last only); ``start``, ``estimate_period``, ``estimate_delay`` [s]; ``estimate_noise``: 4
    standard deviations (position, attitude, linear, angular) or None; ``seed``: the noise's.
    """

    def __init__(
        self,
        controller,
        plant,
        goal,
        rows,
        start=0.0,
        estimate_period=0.0,
        estimate_noise=None,
        estimate_delay=0.0,
        seed=0,
    ):
        self.controller, self.plant, self.goal = controller, plant, goal
        self.unit = controller.capture
        self.body = plant.target
        if self.unit is None or self.body is None:
            raise InputError('capture: the controller and the plant both need the target')
        self.start = float(start)
        self.estimator = PoseEstimator(estimate_period, estimate_noise, estimate_delay, seed)
        self._submitted = False
        self._settle_at = None
        offset = np.asarray(controller.settings.ee_offset, dtype=float)
        self._offset = offset
        self.record = CaptureRecord(
            distance=np.full(rows, np.nan),
            phase=np.array(['idle'] * rows, dtype=object),
            relative_linear=np.full(rows, np.nan),
            relative_angular=np.full(rows, np.nan),
            target_position=np.zeros((rows, 3)),
            target_rotation=np.zeros((rows, 3, 3)),
            target_twist=np.zeros((rows, 6)),
            momentum=np.zeros((rows, 6)),
            wheel_momentum=np.zeros((rows, 3)),
            goal=goal,
        )

    def before(self, t):
        """Give the controller the estimate due at control time ``t`` [s] (before its tick)."""
        if self.body.attached:
            return
        due = self.estimator.observe(t, self.body.odometry)
        if not due:
            return
        from ..core.attitude import quaternion_from_ros

        stamp, odom = due[-1]
        R = np.asarray(quaternion_from_ros(*odom.orientation), dtype=float)
        target = self.unit.capture.target
        state = target.state_from_odometry(R, odom.position, odom.linear, odom.angular)
        self.unit.set_estimate(state, stamp)

    def after(self, row, t):
        """After the controller's tick at ``t``: the goal when due, the weld, the row ``row``."""
        c = self.controller
        unit, body, rec = self.unit, self.body, self.record
        if (
            self.goal is not None
            and not self._submitted
            and t >= self.start - 1e-12
            and c.reference.last_q is not None
            and unit.capture.prediction is not None  # (an estimate came: a delay holds it back)
        ):
            self._submitted = True
            try:
                c.submit_capture(self.goal, t)
            except CaptureRefused as err:
                rec.refused = str(err)
            except SpartError as err:
                rec.refused = str(err)
        if unit.grasp_wanted:
            grasp = body.attach()
            unit.attached(t, grasp.T_link_target)
            rec.grasp = grasp
            self._settle_at = t + (MUJOCO_SETTLE if body.payload_in_robot is False else 0.0)
        if self._settle_at is not None and t >= self._settle_at - 1e-12:
            rec.grasp = body.settle()
            self._settle_at = None
        if row is None:
            return
        rec.phase[row] = unit.phase
        goal = unit.goal
        fb = goal.feedback if goal is not None else None
        if fb is not None and not body.attached:
            rec.relative_linear[row] = float(np.linalg.norm(fb.relative_twist[3:6]))
            rec.relative_angular[row] = float(np.linalg.norm(fb.relative_twist[0:3]))
        elif body.attached:
            rec.relative_linear[row] = rec.relative_angular[row] = 0.0
        s = body.state()
        R_e, p_e = body.link_pose()
        tgt = body.target
        p_f = s.r + s.R @ (tgt.fixture[:3, 3] - tgt.com)
        rec.distance[row] = float(np.linalg.norm(p_e + R_e @ self._offset - p_f))
        odom = body.odometry()
        from ..core.attitude import quaternion_from_ros

        rec.target_position[row] = odom.position
        rec.target_rotation[row] = quaternion_from_ros(*odom.orientation)
        rec.target_twist[row, 0:3], rec.target_twist[row, 3:6] = odom.linear, odom.angular
        rec.momentum[row] = system_momentum(self.plant)
        a = getattr(self.plant, 'actuation', None)
        if a is not None and a.n_wheels:
            speeds = self.plant.joint_velocities()[a.wheel_index]
            rec.wheel_momentum[row] = a.actuators.wheel_axes @ (a.rotor_inertia * speeds)
