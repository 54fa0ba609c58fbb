"""
The embedded plant: a URDF robot simulated by MuJoCo, read out in ROS conventions.

:class:`MujocoPlant` plays the part of ros2_control hardware on a physics engine: it holds
joint efforts (zero-order hold, applied as generalized forces ``qfrc_applied``, so no
actuator model and no clamping), advances the physics by fixed steps, and reads out

- joint states (names sorted alphabetically, as joint_state_broadcaster publishes them;
  efforts = the applied command, as ros2_control's effort state interface echoes it);
- the base link's odometry (REP 105: pose of the URDF base link frame b in the world, twist
  of b expressed in b, at b's origin);
- an IMU on the base link (orientation of b, angular velocity in b, specific force in b:
  acceleration minus gravity, so +g upward at rest);
- total linear momentum and angular momentum (world frame; about the system CoM and about
  the world origin), the base link's acceleration and the joint accelerations.

Frames.  MuJoCo's body frame is the URDF link frame.  Its free joint has qpos = [position of
b's origin, world; quaternion w, x, y, z] and MIXED-frame qvel = [velocity of b's origin in
the WORLD frame; angular velocity in b].  So the odometry twist is (R_b' qvel[0:3],
qvel[3:6]); likewise qacc = [classical acceleration of b's origin, world; angular
acceleration in b] (d/dt of R_b' w is R_b' dw/dt because w x w = 0).  SPART's base frame
is the base CoM frame instead: convert with :mod:`spart_ros.core.base_state`.

:meth:`MujocoPlant.hold` holds the robot still where it is (brakes; a floating base's launch
lock): steps then advance the time only, until released.

Joint damping and friction: the model's law (:mod:`spart_ros.sim.joint_dissipation`).  A
robot that declares Coulomb friction, or a damping too stiff for RK4 at dt, is stepped by the
plant's implicit step whatever the integrator asked (MuJoCo's inertia, bias and constraint forces
at the step's start; the law implicit, its linear part exact over the step: stable whatever the
joint's inertia); otherwise MuJoCo's integrator applies the damping.  ``friction='frictionloss'``:
MuJoCo's constraint instead (static friction; not the model's law).

Effectors (:mod:`spart_ros.sim.effectors`): the plant is MuJoCo's multibody dynamics (the hub)
plus the units it applies at each step (``effectors``): the base's wheels and thrusters
(:attr:`MujocoPlant.actuation`, MuJoCo actuators whose controls are decided before each step) and
an orbit's loads (applied at every stage from MuJoCo's passive-force callback, into
``xfrc_applied``: the user's wrenches there are kept and put back after each step).

Orbit (``orbit``: a :class:`~spart_ros.core.orbit.CircularOrbit`; floating base, zero gravity):
the physics runs in the orbit's frame N (non-rotating, centred on the freely falling reference
point), every body feeling the orbit's tidal force and gravity-gradient torque at every stage
(:class:`~spart_ros.sim.orbit_environment.OrbitLoads`); the initial base pose and twist, the
odometry, ``base_link_state`` and the IMU's orientation are in the rotating LVLH frame (Hill's
axes: x radial, y along-track, z orbit normal; twist relative to LVLH), the IMU's angular velocity
is relative to N (inertial, as a gyro measures it) and its specific force excludes the tidal field
at the base link origin; momentum, accelerations and ``model``/``data`` are in N.

Time is kept as an integer number of nanoseconds (``dt`` rounded to 1 ns), so stamps are
exact and runs are deterministic: the same commands give the same states bit for bit.
Derived quantities (accelerations, IMU, momentum) come from one ``mj_forward`` at the
current state and command, computed when first asked after a change.
"""

from collections import namedtuple
from dataclasses import dataclass, field
import functools
import logging
import math

import numpy as np

from .effectors import Effector
from .joint_dissipation import JointDissipation
from .orbit_environment import orbit_row, OrbitLoads
from .urdf_import import FRICTION_MODELS, INTEGRATORS, MOVING_JOINT_TYPES, mujoco_model_from_urdf
from ..core.errors import InputError, ModelError, SpartError
from ..core.orbit import CircularOrbit
from ..native.compiled import call as _call
from ..native.compiled import finite_c1 as _finite_c1
from ..native.compiled import hold_efforts as _hold_efforts
from ..native.compiled import KINDS
from ..native.compiled import mujoco_base_state as _mujoco_base_state

_K_HOLD = KINDS['hold_efforts']
_NO_ORBIT = orbit_row(None)  # (the kernels' orbit row where there is no orbit: not read)

__all__ = [
    'MujocoPlant',
    'InitialState',
    'JointStateReading',
    'BaseOdometry',
    'ImuReading',
    'Momentum',
    'SimulationDiverged',
    'BASE_MODES',
]

BASE_MODES = ('fixed', 'floating')
#: largest damping rate x dt RK4 is used with (its real-axis stability ends at 2.785; the
#: inertia seen by a joint changes with the configuration, hence the margin)
RK4_DAMPING_LIMIT = 2.0


def fastest_damping(M, D):
    """
    Return the fastest damping rate of (M, D) and the coordinate it moves most: (rate [1/s], k).

    ``M`` (n, n) symmetric positive definite inertia, ``D`` (n, n) symmetric damping: the rate is
    the largest eigenvalue of M^-1 D (computed on L^-1 D L^-T, similar and symmetric, M = L L'),
    ``k`` the index of the largest entry of its eigenvector.
    """
    Li = np.linalg.inv(np.linalg.cholesky(M))
    values, vectors = np.linalg.eigh(Li @ D @ Li.T)
    k = int(np.argmax(values))
    mode = Li.T @ vectors[:, k]  # the eigenvector of M^-1 D
    return float(values[k]), int(np.argmax(np.abs(mode)))


#: MuJoCo's checks that reset the data when the state blows up (NaN, Inf or > 1e10)
_DIVERGENCE_WARNINGS = {
    'mjWARN_BADQPOS': 'qpos',
    'mjWARN_BADQVEL': 'qvel',
    'mjWARN_BADQACC': 'qacc',
}


log = logging.getLogger(__name__)


def _route_mujoco_warnings(mujoco):
    """
    Route MuJoCo's warnings to this module's logger, unless someone set a handler.

    By default MuJoCo prints them and appends them to MUJOCO_LOG.TXT in the working directory.
    """
    if mujoco.get_mju_user_warning() is None:
        mujoco.set_mju_user_warning(lambda text: log.warning('MuJoCo: %s', text))


class SimulationDiverged(SpartError, RuntimeError):
    """
    The physics blew up (e.g. a large effort held on a light joint).

    The plant is back in its initial state with zero efforts.
    """


JointStateReading = namedtuple('JointStateReading', 'names positions velocities efforts')
JointStateReading.__doc__ = """Joint names (tuple) and positions [rad or m], velocities, efforts
[N m or N] (arrays), in the order of ``names``."""
BaseOdometry = namedtuple('BaseOdometry', 'position orientation linear angular')
BaseOdometry.__doc__ = """nav_msgs/Odometry content of the base link b: position (3,) of b's
origin in the world, orientation (x, y, z, w) of b in the world, linear (3,) velocity of b's
origin and angular (3,) velocity, both expressed in b."""
ImuReading = namedtuple('ImuReading', 'orientation angular_velocity linear_acceleration')
ImuReading.__doc__ = """sensor_msgs/Imu content of an ideal IMU at the base link origin, axes of
b: orientation (x, y, z, w) of b in the world, angular velocity (3,) in b, linear acceleration
(3,) in b = specific force (acceleration of b's origin minus gravity: +g upward at rest)."""
Momentum = namedtuple('Momentum', 'linear angular_com angular_origin com mass')
Momentum.__doc__ = """Total momentum of the robot, world frame: linear (3,) [kg m/s], angular
momentum about the system CoM (``angular_com``) and about the world origin
(``angular_origin``) [kg m^2/s], system CoM position ``com`` (3,), total ``mass``."""


@dataclass
class InitialState:
    """
    State the plant starts from and returns to on reset.

    ``joint_positions`` / ``joint_velocities``: {joint name: value}; joints not named are 0.
    Base: ``base_position`` (3,) of the URDF base link origin in the world and
    ``base_orientation`` (x, y, z, w) -- of the URDF's world link instead when the URDF has
    one whose fixed joint places the base (the dynamics node's ``base_position`` convention);
    for a floating base also the twist of the base link expressed in itself
    (``base_linear_velocity``, ``base_angular_velocity``, like the odometry twist).  For a
    fixed base the pose is where the base is mounted and the twist must be zero.
    """

    joint_positions: dict = field(default_factory=dict)
    joint_velocities: dict = field(default_factory=dict)
    base_position: tuple = (0.0, 0.0, 0.0)
    base_orientation: tuple = (0.0, 0.0, 0.0, 1.0)
    base_linear_velocity: tuple = (0.0, 0.0, 0.0)
    base_angular_velocity: tuple = (0.0, 0.0, 0.0)

    @classmethod
    def from_lists(cls, joint_names=(), joint_positions=(), joint_velocities=(), **base):
        """
        Return the initial state given as parallel lists.

        The form of ROS parameters (``initial_joint_names``, ``initial_joint_positions``,
        ``initial_joint_velocities``): ``joint_names``, ``joint_positions``,
        ``joint_velocities``, value i belongs to joint i; empty velocities = zero.
        ``base``: the base fields by name.  InputError on a length mismatch or a joint named twice.
        """
        names = list(joint_names or ())
        positions, velocities = list(joint_positions or ()), list(joint_velocities or ())
        if len(set(names)) != len(names):
            raise InputError(f'initial_joint_names lists a joint twice: {names}')
        if len(positions) != len(names):
            raise InputError(
                f'initial_joint_positions: expected {len(names)} values (one per '
                f'initial_joint_names {names}), got {len(positions)}'
            )
        if velocities and len(velocities) != len(names):
            raise InputError(
                f'initial_joint_velocities: expected {len(names)} values (one per '
                f'initial_joint_names {names}) or none, got {len(velocities)}'
            )
        return cls(
            dict(zip(names, positions)),
            dict(zip(names, velocities)),
            **{k: tuple(v) for k, v in base.items()},
        )


def _vector(name, values, n):
    try:
        a = np.asarray(values, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise InputError(f'{name}: expected {n} numbers, got {values!r}') from None
    if a.shape != (n,):
        raise InputError(f'{name}: expected {n} numbers, got {a.size}')
    if not np.all(np.isfinite(a)):
        raise InputError(f'{name} contains NaN or infinity: {a.tolist()}')
    return a


def checked_orbit(orbit, floating, gravity):
    """
    Return ``orbit`` (None or a CircularOrbit) if a plant can have it, else raise InputError.

    An orbit needs a floating base (the robot moves freely near the reference point) and zero
    uniform gravity (the orbit's tidal field is the gravity there).
    """
    if orbit is None:
        return None
    if not isinstance(orbit, CircularOrbit):
        raise InputError(
            f'orbit: expected a CircularOrbit (spart_ros.core.orbit) or None, got {orbit!r}'
        )
    if not floating:
        raise InputError(
            "orbit: needs a floating base (base='floating'): the robot falls freely near the "
            "orbit's reference point"
        )
    if np.any(np.asarray(gravity, dtype=float) != 0.0):
        raise InputError(
            f'orbit: gravity must be zero, got {np.asarray(gravity, dtype=float).tolist()}: the '
            "orbit's tidal field is the gravity a body feels near the reference point"
        )
    return orbit


def _with_target(extend, unit, actuators, dt):
    """Return a spec extension that adds ``extend``'s (the base's actuators) and the target's."""
    from .target_body import grasp_link

    def both(mujoco, spec, robot):
        if extend is not None:
            extend(mujoco, spec, robot)
        rotors = [w.rotor for w in actuators.wheels] if actuators is not None else []
        unit.link = grasp_link(robot, unit.link, rotors)
        unit.extend(mujoco, spec, robot, dt)

    return both


def _to_lvlh(orbit, t, R, p, v_b, w_b):
    """Return orbit.to_lvlh(t, R, p, v_b, w_b), compiled (new arrays)."""
    from ..native.compiled import lvlh_state

    out = (np.empty((3, 3)), np.empty(3), np.empty(3), np.empty(3))
    lvlh_state(_orbit_row(orbit), float(t), R, p, v_b, w_b, *out)
    return out


@functools.lru_cache(maxsize=64)
def _orbit_row(orbit):
    """Return the compiled kernels' row of ``orbit`` (kept per orbit: it is frozen; read only)."""
    from .orbit_environment import orbit_row

    row = orbit_row(orbit)
    row.setflags(write=False)
    return row


def _rotation_quaternion(R):
    """Return quaternion_to_ros(R) (x, y, z, w), w >= 0, compiled: the same numbers."""
    from ..native.compiled import ros_quaternion

    out = np.empty(4)
    ros_quaternion(R, out)
    return out


def _mj_quaternion(name, xyzw):
    """Return the MuJoCo quaternion (w, x, y, z), normalized, of a ROS one (x, y, z, w)."""
    q = _vector(name, xyzw, 4)
    norm = np.linalg.norm(q)
    if norm < 1e-12:
        raise InputError(f'{name}: (x, y, z, w) = {tuple(q)} is not a rotation (zero)')
    q = q / norm
    return np.array([q[3], q[0], q[1], q[2]])


def _ros_quaternion(wxyz):
    """ROS quaternion (x, y, z, w) with w >= 0 of a MuJoCo one (w, x, y, z)."""
    q = np.array([wxyz[1], wxyz[2], wxyz[3], wxyz[0]], dtype=float)
    return q if q[3] >= 0 else -q


class MujocoPlant:
    """
    A URDF robot in MuJoCo with ros2_control-like effort inputs and ROS readouts.

    Build it with :meth:`from_urdf`.  Joint order: ``joint_names`` = the URDF's moving joints
    depth-first from the root, siblings in file order (MuJoCo's order, and SPART's), used by
    :meth:`set_efforts`; readouts for ROS use
    alphabetical order (``sorted_joint_names``).  ``model`` / ``data`` are MuJoCo's, for
    reading (benchmarks, tests); change the state only through this class.  The constructor's
    ``model``, ``floating``, ``initial``, ``mount`` (the fixed base's pose), ``base_hint``,
    ``load_warnings``, ``robot`` and ``orbit`` (a CircularOrbit or None) come from
    :meth:`from_urdf`.
    """

    def __init__(
        self,
        model,
        floating,
        initial=None,
        mount=None,
        base_hint=None,
        load_warnings=(),
        robot=None,
        orbit=None,
    ):
        import mujoco

        _route_mujoco_warnings(mujoco)
        self._mj = mujoco
        self.model, self.data = model, mujoco.MjData(model)
        self.floating = bool(floating)
        #: base link frame in the frame the initial base pose places (4, 4): the URDF's world
        #: root's fixed joint, else identity
        self.mount = np.eye(4) if mount is None else np.asarray(mount, dtype=float)
        self.base_hint = base_hint  # what the URDF implies: 'fixed', 'floating' or None
        self.load_warnings = list(load_warnings)  # the core reader's warnings
        self.robot = robot  # the core's model of the URDF (when built from one)
        m = model
        self._root = 1  # first body after the world
        self.base_link = m.body(self._root).name
        first = 1 if self.floating else 0  # the free joint is joint 0
        if self.floating and m.jnt_type[0] != mujoco.mjtJoint.mjJNT_FREE:
            raise ModelError('floating base: the root body has no free joint')
        moving = []
        for j in range(first, m.njnt):
            if m.body_rootid[m.jnt_bodyid[j]] != self._root:  # another tree's (a target's)
                continue
            kind = mujoco.mjtJoint(m.jnt_type[j]).name
            if kind not in MOVING_JOINT_TYPES:
                raise ModelError(
                    f'joint {m.joint(j).name!r}: MuJoCo type {kind} is not a URDF moving joint'
                )
            moving.append(j)
        self.joint_names = tuple(m.joint(j).name for j in moving)
        self._qadr = np.array([m.jnt_qposadr[j] for j in moving], dtype=np.intp)
        self._vadr = np.array([m.jnt_dofadr[j] for j in moving], dtype=np.intp)
        self._index = {n: i for i, n in enumerate(self.joint_names)}
        order = sorted(range(len(moving)), key=lambda i: self.joint_names[i])
        self._sorted = np.array(order, dtype=np.intp)
        self.sorted_joint_names = tuple(self.joint_names[i] for i in order)
        self._efforts = np.zeros(len(moving))
        self._dt_ns = int(round(m.opt.timestep * 1e9))
        if self._dt_ns <= 0:
            raise InputError(f'dt must be at least 1 ns, got {m.opt.timestep}')
        m.opt.timestep = self._dt_ns * 1e-9
        self._time_ns = 0
        self._fresh = False  # mj_forward done at this state?
        # MuJoCo's warning counters: all of them (a live array: its bytes compared around a step
        # cost ~0.3 us) and those of a divergence
        self._warning_counts = self.data.warning.number
        self._check_index = [int(getattr(mujoco.mjtWarning, w)) for w in _DIVERGENCE_WARNINGS]
        self._checks = [self.data.warning[k] for k in self._check_index]
        self.paused = False
        #: the base's reaction wheels and thrusters (:mod:`.actuation`), or None
        self.actuation = None
        #: held still where it is (brakes; a launch lock): steps advance the time only, until
        #: released
        self.held = False
        self.initial = InitialState() if initial is None else initial
        #: the joints' damping and friction when the plant applies them itself (implicit step)
        self.dissipation = None
        #: 'model' or 'frictionloss' (how the declared Coulomb friction acts), set by from_urdf
        self.friction = 'model'
        #: the orbit (a CircularOrbit) or None
        self.orbit = checked_orbit(orbit, self.floating, model.opt.gravity)
        #: a free-flying target (:class:`~spart_ros.sim.target_body.MujocoTarget`) or None
        self.target = None
        #: the units applied at each step besides MuJoCo's dynamics (:mod:`.effectors`), in order
        self.effectors = []
        self._deciding, self._staged = [], []
        # MuJoCo's arrays are views of its data: taken once (an attribute read makes a new view)
        self._qpos, self._qvel = self.data.qpos, self.data.qvel
        self._xfrc, self._qfrc_applied = self.data.xfrc_applied, self.data.qfrc_applied
        self._user_xfrc = np.zeros_like(self._xfrc)  # the user's wrenches during a staged step
        self._previous = None  # the passive-force callback found (called after the stages')
        if orbit is not None:
            loads = OrbitLoads(orbit)
            loads.attach_mujoco(model, self.data)
            self.add_effector(loads)
        self.reset()

    def add_effector(self, effector):
        """
        Apply ``effector`` (an :class:`~spart_ros.sim.effectors.Effector`) at every step from now.

        Its :meth:`~spart_ros.sim.effectors.Effector.decide` runs before each step (with MuJoCo's
        ``qvel``), its stage loads (a ``staged`` one) at every stage.
        """
        self.effectors.append(effector)
        if type(effector).decide is not Effector.decide:
            self._deciding.append(effector)
        if effector.staged:
            self._staged.append(effector)
        self._fresh = False

    @classmethod
    def from_urdf(
        cls,
        source,
        base='fixed',
        gravity=(0.0, 0.0, -9.81),
        dt=1e-3,
        integrator='RK4',
        joint_damping=True,
        joint_limits=False,
        initial=None,
        xacro_args=None,
        joint_dynamics=None,
        armature=None,
        friction='model',
        actuators=None,
        orbit=None,
        target=None,
        grasp_link=None,
    ):
        """
        Return the plant of a URDF (path or text).

        ``source``: whatever the core's ``robot_from_urdf`` reads (path, text, bytes, xacro with
        ``xacro_args``).

        ``base``: 'fixed' (root link welded to the world) or 'floating' (free joint).
        ``gravity`` (3,) world frame [m/s^2] (zero for space).  ``dt`` [s]: physics step
        (rounded to 1 ns).  ``integrator``: 'RK4' (default: keeps momentum of a free-floating
        system, where Euler drifts), 'Euler', 'implicit', 'implicitfast'.
        ``joint_damping``: apply the joints' damping, friction and rotor inertia the model declares
        (default True: URDF ``<dynamics damping friction>``, with the ``joint_dynamics`` /
        ``armature`` overrides of :func:`~spart_ros.core.urdf.robot_from_urdf`; the same values a
        controller's model compensates); False: the rigid-body model SPART's functions compute.
        ``friction``: 'model' (default: the model's smoothed Coulomb law, applied by the plant's
        implicit step) or 'frictionloss' (MuJoCo's constraint: stick-slip, a force that differs
        from the model's; see :mod:`spart_ros.sim.joint_dissipation`).
        ``joint_limits``: add the URDF position limits (default False; see
        :func:`~spart_ros.sim.urdf_import.mujoco_model_from_urdf`).
        ``initial``: :class:`InitialState` (default: everything zero, identity pose).
        ``actuators``: the base's reaction wheels and thrusters
        (:class:`~spart_ros.core.actuators.BaseActuators` or its YAML file): the wheels become
        joints of the model (:func:`~spart_ros.core.actuators.add_wheels`), the plant applies
        them (:attr:`actuation`, :mod:`.actuation`).
        ``orbit``: a :class:`~spart_ros.core.orbit.CircularOrbit` (floating base, zero gravity; see
        the module docstring), or None.
        ``target``: a free-flying target (a :class:`~spart_ros.core.target.Target` or what
        :func:`~spart_ros.core.target.load_target` reads), a body of its own under the same orbit
        or gravity, welded to ``grasp_link`` (default: the robot's first leaf link) at the grasp
        (:attr:`target`, :class:`~spart_ros.sim.target_body.MujocoTarget`), or None.
        """
        from .actuation import attach_mujoco, urdf_with_wheels
        from .target_body import MujocoTarget

        if base not in BASE_MODES:
            raise InputError(f"base must be 'fixed' or 'floating', got {base!r}")
        if friction not in FRICTION_MODELS:
            raise InputError(f'friction must be one of {list(FRICTION_MODELS)}, got {friction!r}')
        if integrator not in INTEGRATORS:
            raise InputError(f'integrator must be one of {list(INTEGRATORS)}, got {integrator!r}')
        dt = float(dt)
        if not math.isfinite(dt) or dt <= 0.0:
            raise InputError(f'dt must be a positive number of seconds, got {dt}')
        source, actuators, extend = urdf_with_wheels(source, actuators, xacro_args)
        unit = None
        if target is not None:
            unit = MujocoTarget(target, grasp_link, orbit)
            extend = _with_target(extend, unit, actuators, dt)
        imported = mujoco_model_from_urdf(
            source,
            base == 'floating',
            joint_damping,
            joint_limits,
            xacro_args,
            joint_dynamics,
            armature,
            friction,
            extend,
        )
        import mujoco

        model = imported.model
        model.opt.timestep = dt
        model.opt.integrator = getattr(mujoco.mjtIntegrator, INTEGRATORS[integrator])
        if orbit is not None:  # checked with the gravity asked for
            model.opt.gravity[:] = _vector('gravity', gravity, 3)
        plant = cls(
            model,
            base == 'floating',
            initial,
            imported.mount,
            imported.base_hint,
            imported.warnings,
            imported.robot,
            orbit,
        )
        plant.gravity = gravity
        plant.friction = friction
        plant.description = source if actuators is not None else None
        if model.neq:  # mimic joints (and a target's weld): as stiff as MuJoCo's soft
            model.eq_solref[:, 0] = 2.0 * plant.dt  # constraints go at this step
        if unit is not None:
            unit.attach_mujoco(plant)
            plant.target = unit
            plant.add_effector(unit)
        attach_mujoco(plant, actuators)
        if unit is not None:
            plant.reset()  # the target at its initial state (relative to the robot's)
        declared = {j.name: j.dynamics for j in plant.robot.joints}
        dissipation = JointDissipation(
            [declared[n].damping for n in plant.joint_names],
            [declared[n].friction for n in plant.joint_names],
        )
        if joint_damping and dissipation.active:
            rate, joint = plant.damping_rate()
            stiff = rate * dt > RK4_DAMPING_LIMIT
            if (friction == 'model' and dissipation.has_friction) or stiff:
                if friction == 'frictionloss':  # MuJoCo's constraint stays; the damping is ours
                    dissipation = JointDissipation(dissipation.damping, np.zeros(plant.n_joints))
                plant.apply_dissipation(dissipation)
                plant.load_warnings.append(
                    f"integrator {integrator} not used: the joints' "
                    + (
                        'Coulomb friction'
                        if dissipation.has_friction
                        else f'damping (fastest rate x dt = {rate * dt:.3g}, joint {joint!r})'
                    )
                    + " is stiff at this step; the plant applies the model's damping and "
                    'friction by its implicit step (stable whatever the inertia; '
                    'spart_ros.sim.joint_dissipation)'
                )
        return plant

    def apply_dissipation(self, dissipation):
        """
        Apply the joints' damping and friction by the plant's implicit step from now on.

        ``dissipation``: a :class:`~spart_ros.sim.joint_dissipation.JointDissipation` of the
        moving joints in ``joint_names`` order.  MuJoCo's joint damping is set to zero (its
        integrator is not used; a ``frictionloss`` stays a constraint): each step takes MuJoCo's
        inertia, bias, passive and constraint forces at its start and moves the state by
        :meth:`JointDissipation.step` (the law implicit, the linear part exact).
        """
        m = self.model
        d = np.array(m.dof_damping)
        d[self._vadr] = dissipation.damping
        self._damping = d  # what damping_rate() reports
        m.dof_damping[self._vadr] = 0.0
        self.dissipation = dissipation
        self._M = np.zeros((m.nv, m.nv))
        self._r = np.zeros(m.nv)
        self._fresh = False

    def _dissipative_step(self):
        """One step of dt with the joints' damping and friction implicit (apply_dissipation)."""
        mj, m, d = self._mj, self.model, self.data
        mj.mj_step1(m, d)  # positions, inertia, bias and passive forces at the step's start
        mj.mj_fullM(m, d, self._M)
        r = self._r
        np.subtract(d.qfrc_passive, d.qfrc_bias, out=r)
        r[self._vadr] += self._efforts
        if m.nu:  # MuJoCo actuators (the base's wheels and thrusters): their forces at the start
            mj.mj_fwdActuation(m, d)
            r += d.qfrc_actuator
        if self._xfrc.any():  # wrenches on bodies (at their CoM), as MuJoCo adds them
            for b in np.flatnonzero(np.abs(d.xfrc_applied).max(axis=1) > 0.0):
                x = d.xfrc_applied[b]
                mj.mj_applyFT(m, d, x[0:3].copy(), x[3:6].copy(), d.xipos[b].copy(), int(b), r)
        if d.nefc:  # constraints (mimic joints, limits, frictionloss): forces at the step's start
            d.qfrc_applied[self._vadr] = self._efforts - self.dissipation_forces()
            if not m.nu:
                mj.mj_fwdActuation(m, d)
            mj.mj_fwdAcceleration(m, d)
            mj.mj_fwdConstraint(m, d)
            d.qfrc_applied[self._vadr] = self._efforts
            r += d.qfrc_constraint
        h = self.dt
        qvel = self._qvel
        u, mean = self.dissipation.step(self._M, r, qvel, h, self._vadr)  # (new C-ordered arrays)
        if not (_finite_c1(u) and _finite_c1(mean)):  # compiled finiteness tests
            u[:] = mean[:] = np.nan  # MuJoCo's checks below reset the data and warn
        mj.mj_integratePos(m, self._qpos, mean, h)
        qvel[:] = u
        d.time += h
        mj.mj_checkPos(m, d)
        mj.mj_checkVel(m, d)

    def dissipation_forces(self):
        """
        Return the joints' damping and friction efforts (n_joints,) at the current velocities.

        The model's law d qd + F tanh(qd / v) (``joint_names`` order) as this plant applies it
        (with friction 'frictionloss', the damping only: MuJoCo's constraint force is not a
        function of the velocity).
        """
        qd = self.joint_velocities()
        if self.dissipation is not None:
            return self.dissipation.forces(qd)
        return self.model.dof_damping[self._vadr] * qd

    def damping_rate(self):
        """
        Return the fastest damping rate and the joint it moves most: (rate [1/s], joint name).

        The rate is the largest eigenvalue of M^-1 D at the current state (M the joint-space
        inertia with armature, D the joints' damping), the decay rate of the fastest damped
        motion; the joint dominates its eigenvector ((0.0, None) without damping). An explicit
        integrator needs rate x dt below its stability bound.
        """
        m = self.model
        d = self._damping if self.dissipation is not None else m.dof_damping
        if not np.any(d > 0.0):
            return 0.0, None
        mj = self._mj
        self._mj_forward()
        M = np.zeros((m.nv, m.nv))
        mj.mj_fullM(m, self.data, M)
        rate, dof = fastest_damping(M, np.diag(d))
        return rate, m.joint(int(m.dof_jntid[dof])).name

    @property
    def integrator(self):
        """
        Return how the plant steps: 'dissipation' (its implicit step) or MuJoCo's integrator.

        MuJoCo's: 'RK4', 'Euler', 'implicit' or 'implicitfast'.
        """
        if self.dissipation is not None:
            return 'dissipation'
        names = {getattr(self._mj.mjtIntegrator, v): k for k, v in INTEGRATORS.items()}
        return names[int(self.model.opt.integrator)]

    # -- properties -----------------------------------------------------------------------
    @property
    def name(self):
        """Return the robot's name, the URDF's ``<robot name>``."""
        names = self.model.names
        return names[: names.index(b'\0')].decode()

    @property
    def n_joints(self):
        return len(self.joint_names)

    @property
    def dt(self):
        """Physics step [s] (a whole number of nanoseconds)."""
        return self._dt_ns * 1e-9

    @property
    def dt_ns(self):
        return self._dt_ns

    @property
    def time_ns(self):
        """
        Return the simulated time [ns] (int): steps taken since construction times dt.

        Reset keeps it.
        """
        return self._time_ns

    @property
    def time(self):
        return self._time_ns * 1e-9

    @property
    def gravity(self):
        """Gravity (3,) in the world frame [m/s^2]."""
        return self.model.opt.gravity.copy()

    @gravity.setter
    def gravity(self, g):
        g = _vector('gravity', g, 3)
        checked_orbit(self.orbit, self.floating, g)
        self.model.opt.gravity[:] = g
        self._fresh = False

    @property
    def efforts(self):
        """Return a copy of the held joint efforts, ``joint_names`` order."""
        return self._efforts.copy()

    def joint_index(self, name):
        """Return the position of joint ``name`` in ``joint_names`` (InputError if unknown)."""
        try:
            return self._index[name]
        except KeyError:
            raise InputError(
                f'unknown joint {name!r}: the moving joints are {list(self.joint_names)}'
            ) from None

    # -- inputs ---------------------------------------------------------------------------
    def set_efforts(self, efforts):
        """
        Hold joint efforts (n_joints,) [N m or N] in ``joint_names`` order until the next call.

        A wrong length or a NaN/infinite value raises InputError and the previous efforts stay
        applied.
        """
        e = np.asarray(efforts, dtype=float).reshape(-1)
        if e.shape != self._efforts.shape:
            raise InputError(
                f'expected {self.n_joints} efforts for joints {list(self.joint_names)}, got '
                f'{e.size}'
            )
        if not _finite_c1(e) and not np.all(np.isfinite(e)):  # compiled (C-ordered e) first
            bad = [self.joint_names[i] for i in np.flatnonzero(~np.isfinite(e))]
            raise InputError(f'non-finite effort for joints {bad}: {e.tolist()}')
        self._efforts[:] = e
        self._qfrc_applied[self._vadr] = e
        self._fresh = False

    def hold_command(self, command, values):
        """
        Hold the efforts of a command: ``set_efforts(command.accept(values))`` in one call.

        ``command``: the :class:`~spart_ros.sim.commands.EffortCommand` mapping ``values`` (its
        joints' order) onto this plant's joints.  Compiled for float64 values; the same checks and
        errors as ``accept`` otherwise (CommandRejected, nothing changed).
        """
        held = _call(
            _hold_efforts,
            _K_HOLD,
            values,
            command._index,
            command.efforts,
            self._efforts,
            self._qfrc_applied,
            self._vadr,
        )
        if held == 0:
            command.accepted += 1
            self._fresh = False
        else:  # not float64, or rejected: accept says why
            self.set_efforts(command.accept(values))

    def hold(self, on=True):
        """
        Hold the robot still where it is (``on``).

        As brakes (and a floating base's launch lock) would, or release it: while held,
        :meth:`step` advances the time only, the positions and velocities stay as they are and the
        accelerations read zero.
        """
        self.held = bool(on)
        self._fresh = False

    def step(self, n=1):
        """
        Advance ``n`` physics steps with the held efforts.

        Returns the steps taken (0 while paused; while :meth:`hold` holds the robot, only the time
        advances).

        When the state blows up, MuJoCo resets its data (and warns on stdout); the plant then
        goes back to its initial state with zero efforts (time goes on) and raises
        :class:`SimulationDiverged` saying when and where.
        """
        n = int(n)
        if self.paused or n <= 0:
            return 0
        if self.held:  # brakes on: the robot stays where it is, the time goes on
            if self.target is not None:  # (a free target does not: it tumbles on)
                self.target.advance_held(self.time, n, self.dt)
            self._time_ns += n * self._dt_ns
            self.data.time = self._time_ns * 1e-9
            return n
        counts = self._warning_counts
        seen = counts.tobytes()  # (any warning counted during the steps: look closer)
        if self.dissipation is None and not self._deciding:
            if self._staged:  # the effectors' loads at every stage
                self._with_stages(self._mj.mj_step, self.model, self.data, n)
            else:
                self._mj.mj_step(self.model, self.data, n)
        elif self._staged:
            self._with_stages(self._steps, n)
        else:
            self._steps(n)
        self._time_ns += n * self._dt_ns
        if self.orbit is not None:  # the orbit's angle follows the exact time
            self.data.time = self._time_ns * 1e-9
        self._fresh = False
        if counts.tobytes() == seen:
            return n
        before = np.frombuffer(seen, dtype=counts.dtype)
        for stat, k, name in zip(self._checks, self._check_index, _DIVERGENCE_WARNINGS.values()):
            if counts[k] != before[k]:
                dof, held = stat.lastinfo, self._efforts.tolist()
                self.reset()
                raise SimulationDiverged(
                    f'the simulation diverged before t = {self.time:.6f} s (NaN, infinite or huge '
                    f'{name} at degree of freedom {dof}; efforts {held}): back to the initial '
                    'state, efforts zero'
                )
        return n

    def _steps(self, n):
        """Take ``n`` steps, the effectors deciding before each (the implicit step if any)."""
        m, d, mj = self.model, self.data, self._mj
        deciding, qvel = self._deciding, self._qvel
        for k in range(n):
            if deciding:  # the actuators decide before each step (at its start's time)
                t = (self._time_ns + k * self._dt_ns) * 1e-9
                for effector in deciding:
                    effector.decide(t, qvel)
            if self.dissipation is None:
                mj.mj_step(m, d)
            else:  # the stages' loads at the step's start (mj_step1's passive forces)
                self._dissipative_step()

    def _with_stages(self, function, *args):
        """
        Return ``function(*args)`` (``mj_step``, ``mj_forward``...) with the staged loads on.

        MuJoCo has one passive-force callback per process, called for every model (even one being
        compiled): it is set only around this plant's own calls, and the one found is put back
        (and called after the stages').  The user's ``xfrc_applied`` is kept and put back.
        """
        mj = self._mj
        np.copyto(self._user_xfrc, self._xfrc)
        self._previous = mj.get_mjcb_passive()
        mj.set_mjcb_passive(self._stage_callback)
        try:
            return function(*args)
        finally:
            mj.set_mjcb_passive(self._previous)
            np.copyto(self._xfrc, self._user_xfrc)

    def _stage_callback(self, m, d):
        if d is self.data:
            base = self._user_xfrc  # the first adds its loads to the user's, the others to it
            for effector in self._staged:
                effector.mujoco_stage(d, base)
                base = None
        if self._previous is not None:
            self._previous(m, d)

    def reset(self, initial=None, new_time=False):
        """
        Put the robot back in ``initial`` (default: ``self.initial``) with zero efforts.

        Simulated time goes on (like Gazebo's reset_world), so a /clock never runs backwards;
        ``new_time``: the reset takes one step of it, so that the state after the reset has a
        time (a stamp) of its own, not the one of the last state before it.
        Bad names or values raise InputError and leave the plant unchanged.
        """
        initial = self.initial if initial is None else initial
        q = self._joint_values('joint_positions', initial.joint_positions)
        u = self._joint_values('joint_velocities', initial.joint_velocities)
        p = _vector('base_position', initial.base_position, 3)
        quat = _mj_quaternion('base_orientation', initial.base_orientation)
        v_b = _vector('base_linear_velocity', initial.base_linear_velocity, 3)
        w_b = _vector('base_angular_velocity', initial.base_angular_velocity, 3)
        if not self.floating and (v_b.any() or w_b.any()):
            raise InputError(
                'a fixed base has no velocity: base_linear_velocity and base_angular_velocity '
                'must be zero'
            )
        p, quat = self._mounted(p, quat)
        if self.orbit is not None:  # given in LVLH at the time of the state after the reset
            t_ns = self._time_ns + (self._dt_ns if new_time else 0)
            p, quat, v_b, w_b = self._from_lvlh(t_ns * 1e-9, p, quat, v_b, w_b)
        m, d, mj = self.model, self.data, self._mj
        mj.mj_resetData(m, d)
        if self.floating:  # free joint: absolute pose
            d.qpos[0:3], d.qpos[3:7] = p, quat
            R = np.empty(9)
            mj.mju_quat2Mat(R, quat)
            d.qvel[0:3] = R.reshape(3, 3) @ v_b  # free joint: linear velocity in the world
            d.qvel[3:6] = w_b
        else:
            m.body_pos[self._root], m.body_quat[self._root] = p, quat
        d.qpos[self._qadr], d.qvel[self._vadr] = q, u
        if new_time:
            self._time_ns += self._dt_ns
        d.time = self._time_ns * 1e-9
        for effector in self.effectors:  # (at the reset's time: a target placed then)
            effector.reset()
        self._efforts[:] = 0.0
        self._fresh = False

    def _from_lvlh(self, t, p, quat, v_b, w_b):
        """Return the base link's (p, MuJoCo quaternion, v_b, w_b) in N of the same in LVLH."""
        mj = self._mj
        R = np.empty(9)
        mj.mju_quat2Mat(R, quat)
        R, p, v_b, w_b = self.orbit.from_lvlh(t, R.reshape(3, 3), p, v_b, w_b)
        out = np.empty(4)
        mj.mju_mat2Quat(out, np.ascontiguousarray(R).reshape(9))
        return p, out, v_b, w_b

    def _mounted(self, p, quat):
        """
        Return the base link pose from the initial pose and the mount.

        The pose as (position, MuJoCo quaternion).
        """
        mj = self._mj
        if np.array_equal(self.mount, np.eye(4)):
            return p, quat
        R = np.empty(9)
        mj.mju_quat2Mat(R, quat)
        q_mount = np.empty(4)
        mj.mju_mat2Quat(q_mount, np.ascontiguousarray(self.mount[:3, :3]).reshape(9))
        out = np.empty(4)
        mj.mju_mulQuat(out, quat, q_mount)
        return p + R.reshape(3, 3) @ self.mount[:3, 3], out

    def _joint_values(self, what, values):
        out = np.zeros(self.n_joints)
        for name, value in dict(values).items():
            out[self.joint_index(name)] = _vector(f'{what}[{name!r}]', [value], 1)[0]
        return out

    # -- readouts -------------------------------------------------------------------------
    def _forward(self):
        """Compute the derived quantities (accelerations, CoM, body velocities) at this state."""
        if not self._fresh:
            d = self.data
            if self.dissipation is not None:  # the law at this state's velocities
                d.qfrc_applied[self._vadr] = self._efforts - self.dissipation_forces()
            self._mj_forward()
            if self.dissipation is not None:
                d.qfrc_applied[self._vadr] = self._efforts
            self._fresh = True

    def _mj_forward(self):
        if self._staged:
            self._with_stages(self._mj.mj_forward, self.model, self.data)
        else:
            self._mj.mj_forward(self.model, self.data)

    def joint_positions(self):
        """Return (n_joints,) in ``joint_names`` order."""
        return self._qpos[self._qadr]  # (fancy indexing makes a new array)

    def joint_velocities(self):
        """Return (n_joints,) in ``joint_names`` order."""
        return self._qvel[self._vadr]

    def joint_accelerations(self):
        """
        Return (n_joints,) in ``joint_names`` order, at this state under the held efforts.

        Zero while held.
        """
        if self.held:
            return np.zeros(self.n_joints)
        self._forward()
        return self.data.qacc[self._vadr].copy()

    def joint_state(self):
        """
        Return the :class:`JointStateReading`, names sorted alphabetically.

        The order joint_state_broadcaster publishes.
        """
        s, d = self._sorted, self.data
        return JointStateReading(
            self.sorted_joint_names, d.qpos[self._qadr[s]], d.qvel[self._vadr[s]], self._efforts[s]
        )

    def _base_pose(self):
        """(position (3,), quaternion w, x, y, z) of the base link frame in the world."""
        if self.floating:
            return self._qpos[0:3].copy(), self._qpos[3:7].copy()
        return self.model.body_pos[self._root].copy(), self.model.body_quat[self._root].copy()

    def _base_rotation(self):
        """R_b (3, 3): base link frame -> world (N with an orbit)."""
        R = np.empty(9)
        self._mj.mju_quat2Mat(R, self._base_pose()[1])
        return R.reshape(3, 3)

    def base_rotation(self):
        """Return R_b (3, 3): base link frame -> world (-> LVLH with an orbit)."""
        if self.orbit is not None:
            return self.orbit.lvlh_rotation(self.time).T @ self._base_rotation()
        return self._base_rotation()

    def _base_twist(self):
        """(v_b, w_b): velocity of the base link origin and angular velocity, both in b (N's)."""
        if not self.floating:
            return np.zeros(3), np.zeros(3)
        qvel = self._qvel
        return self._base_rotation().T @ qvel[0:3], qvel[3:6].copy()

    def base_link_state(self):
        """
        Return (R_b (3, 3), p_b (3,), v_b (3,), w_b (3,)).

        The base link's pose in the world and its twist in b (REP 105), new arrays: what
        :meth:`odometry` carries, with a rotation matrix.  With an orbit: in LVLH, the twist
        relative to LVLH.
        """
        if not self.floating:
            p, R = self._base_pose()[0], self._base_rotation()
            v_b, w_b = np.zeros(3), np.zeros(3)
        else:  # compiled: the free joint's pose and twist (in LVLH with an orbit)
            R, p, v_b, w_b = np.empty((3, 3)), np.empty(3), np.empty(3), np.empty(3)
            orbit = self.orbit
            row = _NO_ORBIT if orbit is None else _orbit_row(orbit)
            t = self._time_ns * 1e-9
            _mujoco_base_state(self._qpos, self._qvel, row, t, orbit is not None, R, p, v_b, w_b)
            return R, p, v_b, w_b
        if self.orbit is not None:
            return _to_lvlh(self.orbit, self.time, R, p, v_b, w_b)
        return R, p, v_b, w_b

    def odometry(self):
        """
        Return the :class:`BaseOdometry` of the base link (REP 105: twist in its frame).

        With an orbit: pose in LVLH, twist relative to LVLH.
        """
        if self.orbit is not None:
            R, p, v_b, w_b = self.base_link_state()
            return BaseOdometry(p, _rotation_quaternion(R), v_b, w_b)
        p, quat = self._base_pose()
        v_b, w_b = self._base_twist()
        return BaseOdometry(p, _ros_quaternion(quat), v_b, w_b)

    def base_acceleration(self):
        """
        Return (a_b, alpha_b): classical acceleration of the base origin, angular acceleration.

        Both expressed in b (zero for a fixed base), at this state under the held efforts; with an
        orbit, relative to N.
        """
        if not self.floating or self.held:
            return np.zeros(3), np.zeros(3)
        self._forward()
        qacc = self.data.qacc
        return self._base_rotation().T @ qacc[0:3], qacc[3:6].copy()

    def imu(self):
        """
        Return the :class:`ImuReading` of an ideal IMU at the base link origin, axes of b.

        With an orbit: orientation in LVLH, angular velocity relative to N (inertial), specific
        force = acceleration in N minus the tidal acceleration at the base link origin.
        """
        p, quat = self._base_pose()
        R_b = np.empty((3, 3))
        self._mj.mju_quat2Mat(R_b.reshape(9), quat)
        w_b = self._qvel[3:6].copy() if self.floating else np.zeros(3)
        if not self.floating or self.held:  # (base_acceleration, _base_twist: R_b once)
            a_b = np.zeros(3)
        else:
            self._forward()
            a_b = R_b.T @ self.data.qacc[0:3]
        if self.orbit is not None:
            from ..native.compiled import tidal_acceleration

            t, tidal = self.time, np.empty(3)
            tidal_acceleration(_orbit_row(self.orbit), t, p, tidal)
            R = _to_lvlh(self.orbit, t, R_b, p, np.zeros(3), w_b)[0]
            return ImuReading(_rotation_quaternion(R), w_b, a_b - R_b.T @ tidal)
        return ImuReading(_ros_quaternion(quat), w_b, a_b - R_b.T @ self.model.opt.gravity)

    def momentum(self):
        """
        Return the :class:`Momentum` of the whole robot (MuJoCo's mj_subtreeVel of the root body).

        With an orbit: in N, about the reference point.
        """
        self._forward()
        self._mj.mj_subtreeVel(self.model, self.data)
        r, d = self._root, self.data
        mass = float(self.model.body_subtreemass[r])
        linear = mass * d.subtree_linvel[r]
        com = d.subtree_com[r].copy()
        angular_com = d.subtree_angmom[r].copy()
        return Momentum(linear, angular_com, angular_com + np.cross(com, linear), com, mass)
