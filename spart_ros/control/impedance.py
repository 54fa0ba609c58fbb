"""
Impedance control modes: joint impedance and Cartesian impedance at the end effector (pure numpy).

No inertia shaping (the robot keeps its own inertia, as franka_ros's example controllers and a
compliant robot in contact want it): the laws add springs and dampers to the robot and
compensate what the model knows (gravity, and the joints' friction and rotor inertia the model
declares: :class:`~spart_ros.control.friction_compensation.FrictionCompensation`; on a joint
that settles within the control period they cannot compensate it at that rate, and say so once,
at build).

**Joint impedance** (:class:`JointImpedance`, mode ``joint_impedance``, fixed base), with the
joint reference (q_d, qd_d, qdd_d) the controller schedules (a trajectory, or the hold)::

    tau = H(q) qdd_d + C(q, qd) qd_d + g(q) + K (q_d - q) + D (qd_d - qd)

K, D diagonal (``impedance_stiffness`` [N m/rad or N/m], ``impedance_damping`` [N m s/rad or
N s/m], one value or one per command joint).  This is franka_ros's law with the Coriolis term of
Paden and Panja's PD+: C(q, qd) qd_d instead of C(q, qd) qd (the same on the reference), so that
the error dynamics H e'' + (C + D) e' + K e = 0 are passive: with a constant reference the
energy 1/2 qd' H qd + 1/2 e' K e never grows (C is the Christoffel-consistent Coriolis matrix,
H' - 2C skew: C(q, qd) w = (b(qd + w) - b(qd - w)) / 4 with b(u) = C(q, u) u, two bias
evaluations of the fast path).

**Cartesian impedance** (:class:`CartesianImpedance`, mode ``cartesian_impedance``, fixed base;
:class:`FloatingCartesianImpedance`, mode ``floating_cartesian_impedance``, a free-floating
base) at the end effector (``ee_link``, the point ``ee_offset`` in its URDF frame, its axes)::

    e = [rotvec(R_d R'); p_d - p],   e' = [w_d; v_d] - J qd    (world frame, [angular; linear])
    F = K e + D e'                                              (K, D: 6x6, world axes)
    tau = J' F + N' H (k_ns (q_ns - q) - d_ns qd) + g(q)

on the task rows ``task_rows`` (default all six); ``cartesian_stiffness`` K and
``cartesian_damping`` D: 6 values (the diagonal, [rotation N m/rad x3; translation N/m x3]) or 36
(row-major 6x6, symmetric positive semi-definite); D empty = 2 sqrt(K) (matrix square root).
The null space term holds the posture q_ns (the joint positions at activation) without
disturbing the task: N' = 1 - J' J#' with the dynamically consistent inverse J# = H^-1 J' (J
H^-1 J')^-1 (Khatib), mass-weighted gains ``nullspace_stiffness`` k_ns [1/s^2] and
``nullspace_damping`` d_ns [1/s] (negative = 2 sqrt(k_ns)).  At rest under an external wrench w
at the end effector the deflection is x - x_d = K^-1 w on the task rows (the null space term
cannot push on the task: J#' N' = 0); with k_ns = 0 and a constant reference the energy 1/2 qd'
H qd + 1/2 e_p' K_p e_p + 1/2 k_r ``|rotvec|^2`` never grows (isotropic rotational stiffness k_r;
the mass-weighted null space damping N' H is positive semi-definite).  No Coriolis compensation:
it would break that passivity.

On a free-floating base the task Jacobian is the generalized Jacobian J* (the base reacts:
momentum conservation, :mod:`.free_floating`), the inertia the reduced one H* = Hm - H0m' H0^-1
H0m of the joints with the base free, and there is no gravity term (a freely falling system's
internal motion does not feel uniform gravity); the twist e' includes the drift of a non-zero
momentum.

References (:meth:`set_reference`): ``'ee_pose'`` = (R (3, 3), p (3,), frame) a target of the
end-effector frame, ``'ee_goal'`` = a :class:`~spart_ros.control.ee_goals.PoseGoal` (a target
reached along a Cartesian or screw path in a given time: the path's pose is the spring's
equilibrium and its twist the damper's v_d, tick by tick; at its end its pose stays the
target), ``'ee_twist'`` = (twist (6,), frame) a feed-forward of v_d (older than
``reference_timeout``: none).  Without one the end effector holds the pose it had at
activation (or after a reset).  Frames: 'world', or 'base' (the URDF base link frame, moved
with the base: see :mod:`.space_modes`).
"""

import numpy as np

from .damped_least_squares import damped_pseudo_inverse
from .ee_goals import GoalFollower
from .effort_laws import _JointLaw
from .end_effector import EndEffector, rotation_vector
from .free_floating import FreeFloatingKinematics
from .friction_compensation import FrictionCompensation, uncompensated_notes
from .law import BaseFrames, Law, LawOutput
from .space_modes import REFERENCE_FRAMES
from ..core import checks as chk
from ..core.connectivity import leaf_links
from ..core.errors import InputError

__all__ = [
    'JointImpedance',
    'CartesianImpedance',
    'FloatingCartesianImpedance',
    'cartesian_gains',
    'nullspace_gains',
    'coriolis_times',
]


def coriolis_times(dynamics, R0, r0, q, u0, qd, w, floating=False):
    """
    Return C(q, qd) w (n,), C the Christoffel-consistent Coriolis matrix (H' - 2 C skew).

    A new array; ``dynamics``: the fast path, ``floating``: a floating base (else fixed).

    (b(qd + w) - b(qd - w)) / 4 with b(u) = C(q, u) u, the fast path's bias forces without gravity
    and without the joints' damping and friction (the polarization of a quadratic form: the
    Christoffel symbols are symmetric in their last two indices).
    """
    zero = np.zeros(3)
    plus, minus = qd + w, qd - w
    b_plus = dynamics.bias_forces(R0, r0, q, u0, plus, gravity=zero, floating=floating)[1].copy()
    b_minus = dynamics.bias_forces(R0, r0, q, u0, minus, gravity=zero, floating=floating)[1]
    out = 0.25 * (b_plus - b_minus)
    if dynamics.joint_dynamics:  # the kernel's d u + F sgn_v(u) are no Coriolis forces
        out -= 0.25 * (dynamics.joint_friction(plus) - dynamics.joint_friction(minus))
    return out


def _matrix6(name, values):
    """
    6 values (a diagonal) or 36 (row-major) -> (6, 6), symmetric PSD.

    InputError naming ``name``.
    """
    try:
        a = np.array([float(x) for x in values], dtype=float)
    except (TypeError, ValueError):
        raise InputError(f'{name}: expected 6 or 36 numbers, got {values!r}') from None
    if a.size == 6:
        M = np.diag(a)
    elif a.size == 36:
        M = a.reshape(6, 6)
    else:
        raise InputError(
            f'{name}: expected 6 values (the diagonal: rotation x, y, z, translation x, y, z) or '
            f'36 (a 6x6 matrix, row-major), got {a.size}'
        )
    if not np.all(np.isfinite(M)):
        raise InputError(f'{name}: NaN or infinity in {a.tolist()}')
    if np.abs(M - M.T).max() > 1e-9 * max(1.0, np.abs(M).max()):
        raise InputError(f'{name}: the 6x6 matrix is not symmetric')
    if np.linalg.eigvalsh(M).min() < -1e-9 * max(1.0, np.abs(M).max()):
        raise InputError(
            f'{name}: the 6x6 matrix is not positive semi-definite (a spring or damper that gives '
            'energy)'
        )
    return M


def _sqrt_psd(M):
    vals, vecs = np.linalg.eigh(M)
    return (vecs * np.sqrt(np.clip(vals, 0.0, None))) @ vecs.T


def cartesian_gains(stiffness, damping=()):
    """
    Return (K, D), each (6, 6).

    Of the settings ``cartesian_stiffness`` (``stiffness``) and ``cartesian_damping``
    (``damping``; empty: D = 2 sqrt(K));
    InputError naming the bad one.
    """
    K = _matrix6('cartesian_stiffness', stiffness)
    D = 2.0 * _sqrt_psd(K) if len(damping) == 0 else _matrix6('cartesian_damping', damping)
    return K, D


def nullspace_gains(stiffness, damping=-1.0):
    """
    Return (k_ns, d_ns) of the settings ``stiffness`` and ``damping`` (< 0: 2 sqrt(k_ns)).

    InputError naming the bad one.
    """
    k = chk.nonnegative('nullspace_stiffness', stiffness)
    d = chk.scalar('nullspace_damping', damping)
    if not isinstance(d, float) or not np.isfinite(d):
        raise InputError(
            f'nullspace_damping: expected a number (negative: 2 sqrt(nullspace_stiffness)), got '
            f'{chk.given(damping)}'
        )
    return k, (2.0 * np.sqrt(k) if d < 0 else d)


class JointImpedance(_JointLaw):
    """
    tau = H qdd_d + C(q, qd) qd_d + g + K (q_d - q) + D (qd_d - qd) (module docstring).

    Fixed base.
    """

    mode = 'joint_impedance'
    base = 'fixed'

    @classmethod
    def build(cls, mode, dynamics, settings, gains):
        law = super().build(mode, dynamics, settings, gains)
        law.notes = law.notes + uncompensated_notes(mode, dynamics, law.friction)
        return law

    def command(self, state, ref, t, dt):
        R0, r0, u0 = self.frames.fixed(state.base)
        q, qd = state.q, state.qd
        g = self.gains
        # H qdd_d + g (+ the rotor inertia's a qdd_d): inverse dynamics at zero velocity
        _, tau = self.dynamics.inverse_dynamics(
            R0, r0, q, u0, self._zero_q, u0, ref.acceleration, floating=False
        )
        out = tau.copy()
        if ref.velocity.any():
            out += coriolis_times(self.dynamics, R0, r0, q, u0, qd, ref.velocity)
        e = np.subtract(ref.position, q, out=self._e)
        ev = np.subtract(ref.velocity, qd, out=self._ev)
        out += g.stiffness * e
        out += g.damping * ev
        if self.friction.active:
            self.qdd_cmd[:] = ref.acceleration
            out += self.friction.efforts(
                qd, ref.acceleration, ref.velocity + (0.5 * dt) * ref.acceleration, dt
            )
        return LawOutput(out)


class _Cartesian(Law):
    """
    What the Cartesian impedance laws share.

    Settings, references, the end effector, the task.
    """

    follows = 'end_effector'
    holds_position = True
    references = ('ee_pose', 'ee_goal', 'ee_twist')

    def __init__(self, dynamics, settings):
        robot = dynamics.robot
        self.robot, self.dynamics = robot, dynamics
        self.n = dynamics.n_q  # the independent coordinates (a mimic joint follows its leader)
        link = settings.ee_link or leaf_links(robot)[0]
        self.end_effector = EndEffector(robot, link, list(settings.ee_offset), frame='link')
        self.rows = np.array(settings.task_rows if settings.task_rows else range(6), dtype=np.intp)
        self.frames = BaseFrames(robot)
        self.friction = FrictionCompensation(dynamics)
        self.apply_settings(settings)
        self.clear_references()

    @classmethod
    def build(cls, mode, dynamics, settings, gains=None):
        law = cls(dynamics, settings)
        law.notes = uncompensated_notes(mode, dynamics, law.friction)
        return law

    def apply_settings(self, settings, gains=None):
        self.friction.scale = settings.friction_compensation
        K, D = cartesian_gains(settings.cartesian_stiffness, settings.cartesian_damping)
        r = self.rows
        self.K, self.D = K[np.ix_(r, r)], D[np.ix_(r, r)]
        self.k_ns, self.d_ns = nullspace_gains(
            settings.nullspace_stiffness, settings.nullspace_damping
        )
        self.reference_timeout = float(settings.reference_timeout)

    def reset(self):
        """
        Forget the hold.

        The end-effector pose and the posture are taken again at the next command: after a halt, a
        reset of the plant, a jump.
        """
        self._hold = None
        self._posture = None

    def clear_references(self):
        self.reset()
        self._pose = self._twist = None
        if getattr(self, '_goals', None) is not None:
            self._goals.abort('the references were cleared (activation)')
        self._goals = GoalFollower()

    def abort_goal(self, why):
        """Drop the pose goal being followed (aborted: ``why``)."""
        self._goals.abort(why)

    @property
    def has_reference(self):
        return self._pose is not None or self._goals.active or self._twist is not None

    def set_reference(self, name, value, received=None):
        if name not in self.references:
            return super().set_reference(name, value, received)
        if name == 'ee_goal':
            self._goals.set_goal(value)
        elif name == 'ee_pose':
            R, p, frame = value
            _frame('pose_frame', frame)
            self._pose = (
                chk.array('ee_pose rotation', R, (3, 3)).copy(),
                chk.vector('ee_pose position', p, 3).copy(),
                frame,
            )
            self._goals.preempt('replaced by an ee_pose reference')
        else:
            twist, frame = value
            _frame('twist_frame', frame)
            self._twist = (chk.vector('ee_twist', twist, 6).copy(), frame, received)

    def _static_target(self, base, R, p):
        """(R_d, p_d) world of the pose target, or of the hold (the pose of the first tick)."""
        if self._pose is not None:
            R_d, p_d, frame = self._pose
            if frame == 'base':
                R_d, p_d = base.R_b @ R_d, base.p_b + base.R_b @ p_d
            return R_d, p_d
        if self._hold is None:
            self._hold = (R.copy(), p.copy())
        return self._hold

    def _target(self, base, R, p, t, now):
        """(R_d, p_d, v_d (6,)) of this tick in the world."""
        v_d = np.zeros(6)
        sample = None
        if self._goals.active:
            sample, finished = self._goals.sample(t, lambda: self._static_target(base, R, p), base)
            if finished:
                self._pose = (sample.rotation.copy(), sample.position.copy(), 'world')
        if sample is not None:
            R_d, p_d, v_d = sample.rotation, sample.position, sample.twist.copy()
        else:
            R_d, p_d = self._static_target(base, R, p)
        tw = self._twist
        if tw is not None and (
            now is None or tw[2] is None or now - tw[2] <= self.reference_timeout
        ):
            twist, frame, _ = tw
            v_d += (
                np.concatenate([base.R_b @ twist[0:3], base.R_b @ twist[3:6]])
                if frame == 'base'
                else twist
            )
        return R_d, p_d, v_d

    def _task(self, base, q, qd, R, p, J, v, H, t, now):
        """
        ``tau`` of the task and the null space (module docstring).

        Without gravity and friction.
        """
        if self._posture is None:
            self._posture = q.copy()
        R_d, p_d, v_d = self._target(base, R, p, t, now)
        e = np.concatenate([rotation_vector(R_d @ R.T), p_d - p])
        r = self.rows
        F = self.K @ e[r] + self.D @ (v_d - v)[r]
        Jr = J[r]
        tau = Jr.T @ F
        Hinv_Jt = np.linalg.solve(H, Jr.T)
        Lam = damped_pseudo_inverse(Jr @ Hinv_Jt, 0.0).inverse  # (J H^-1 J')^-1 (pseudo-inverse)
        JsharpT = Lam @ Hinv_Jt.T  # J#' = Lam J H^-1
        ns = H @ (self.k_ns * (self._posture - q) - self.d_ns * qd)
        tau += ns - Jr.T @ (JsharpT @ ns)
        self.last_error = e
        return tau


def _frame(name, frame):
    if frame not in REFERENCE_FRAMES:
        raise InputError(f'{name}: expected one of {REFERENCE_FRAMES}, got {frame!r}')


class CartesianImpedance(_Cartesian):
    """
    Cartesian impedance at the end effector of a fixed-base robot (module docstring).

    ``dynamics``: the robot's fast path; ``settings``: the controller's settings (the end
    effector, the stiffness and damping).
    """

    mode = 'cartesian_impedance'
    base = 'fixed'

    def __init__(self, dynamics, settings):
        super().__init__(dynamics, settings)
        self.link, self.offset = self.end_effector.link, self.end_effector.offset

    def command(self, state, joint_reference, t, dt, now=None):
        fd = self.dynamics
        R0, r0, u0 = self.frames.fixed(state.base)
        q, qd = state.q, state.qd
        J = fd.jacobian(self.link, R0, r0, q, offset=self.offset, bias=False)[0][:, 6:].copy()
        R_link, d = fd.link_pose(self.link)
        R, p = self.end_effector.frame_pose(R_link, r0 + d)
        H = fd.mass_matrix(R0, r0, q)[6:, 6:].copy()
        tau = self._task(state.base, q, qd, R, p, J, J @ qd, H, t, now)
        tau += fd.gravity_forces(R0, r0, q)[1]
        if self.friction.active:
            tau += self.friction.efforts(qd, np.zeros(self.n), qd, dt)
        return LawOutput(tau)


class FloatingCartesianImpedance(_Cartesian):
    """
    Cartesian impedance at the end effector of a free-floating robot.

    With the generalized Jacobian (module docstring); ``dynamics`` and ``settings`` as
    :class:`CartesianImpedance`'s.
    """

    mode = 'floating_cartesian_impedance'
    base = 'floating'

    def __init__(self, dynamics, settings):
        if dynamics.robot.mimic:
            raise InputError(
                f'mode {self.mode}: robot {dynamics.robot.name!r} has mimic joints '
                f"{sorted(dynamics.robot.mimic)}; the generalized Jacobian works in SPART's joint "
                'variables (every moving joint independent)'
            )
        super().__init__(dynamics, settings)
        ee = self.end_effector
        self.kinematics = FreeFloatingKinematics(
            self.robot, ee.link, ee.offset, dynamics.new_workspace()
        )

    def command(self, state, joint_reference, t, dt, now=None):
        R0, r0, u0 = self.frames.floating(state.base)
        q, qd = state.q, state.qd
        ff = self.kinematics.update(R0, r0, q, u0, qd)
        R, p = self.end_effector.frame_pose(ff.link_rotation, ff.link_position)
        H = ff.Hm + ff.H0m.T @ ff.reaction  # the joints' inertia with the base free (reduced)
        v = ff.Jstar @ qd + ff.drift
        tau = self._task(state.base, q, qd, R, p, ff.Jstar, v, H, t, now)
        if self.friction.active:
            tau += self.friction.efforts(qd, np.zeros(self.n), qd, dt)
        return LawOutput(tau)
