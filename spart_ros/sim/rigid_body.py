"""
A plant without a physics engine: the core's own forward dynamics integrated by RK4.

:class:`RigidBodyPlant` is Modern Robotics' ``SimulateControl`` plant (the robot's forward
dynamics integrated with a fixed step) on the compiled fast path
(:class:`~spart_ros.core.fast.FastDynamics`, the articulated-body algorithm), fixed or
free-floating base, with the joint friction, damping and rotor inertia the robot declares
(``joint_dynamics``, default True: the same terms a controller's model compensates, the same
law as the MuJoCo plant's: the smoothed Coulomb friction of :mod:`spart_ros.core.joint_friction`).
It reads out the same quantities as :class:`~spart_ros.sim.plant.MujocoPlant` in the same ROS
conventions (joint positions and
velocities, the base link's odometry: pose of b in the world, twist in b), so a closed loop
(:func:`spart_ros.sim.closed_loop.simulate`) runs on either.

Coordinates: the robot's independent joint coordinates (``joint_names`` =
``robot.coordinates.names``; a mimic joint follows its leader exactly, where MuJoCo's equality
constraint is soft).  State integrated: the joints (q, qd) and, floating, the base CoM pose
(unit quaternion of SPART's R0 and r0) and SPART's u0 (angular velocity in the base CoM frame,
CoM velocity in the world); the quaternion is renormalized after each step.  One step costs
four forward dynamics calls (about 4 x 2 us on a 7-joint arm).  Time is counted in integer
nanoseconds, as the MuJoCo plant counts it.

Stiff joint dissipation.  A robot that declares Coulomb friction (as stiff as a damping of F / v
near rest), or a damping too stiff for RK4 at ``dt`` (the fastest damping rate x dt above
:data:`~spart_ros.sim.plant.RK4_DAMPING_LIMIT`), is stepped instead by the implicit step the
MuJoCo plant takes (:mod:`spart_ros.sim.joint_dissipation`: the model's damping and friction law
implicit, its linear part exact over the step, the positions moved by the mean velocity; the
base quaternion by the exponential of its mean rotation rate).  Stable whatever the joint's
inertia; first order in dt for the rest of the dynamics (``integrator`` says which: 'RK4' or
'dissipation').

``orbit`` (a :class:`~spart_ros.core.orbit.CircularOrbit`, floating base, zero gravity): the
robot moves near the orbit's reference point; the state is integrated in the orbit's frame N
(non-rotating, falling with the reference point) with the tidal force and gravity-gradient torque
on every link at every RK4 stage (:class:`~spart_ros.sim.orbit_environment.OrbitLoads`); the
initial state and the readouts (``base_link_state``, ``odometry``) are in the rotating LVLH frame
(Hill's axes: x radial, y along-track, z orbit normal), ``spart_state`` and ``momentum`` in N.
"""

import math

import numpy as np

from .actuation import attach_rk4
from .effectors import Effector
from .joint_dissipation import JointDissipation
from .orbit_environment import orbit_row, OrbitLoads
from .plant import (
    _NO_ORBIT,
    _orbit_row,
    _rotation_quaternion,
    _vector,
    BASE_MODES,
    BaseOdometry,
    checked_orbit,
    fastest_damping,
    InitialState,
    RK4_DAMPING_LIMIT,
)
from ..core import base_state as bs
from ..core.attitude import _unit_quaternion_rotation, quaternion_from_ros, quaternion_to_ros
from ..core.errors import InputError
from ..core.fast import FastDynamics
from ..core.fast.mimic import fast_dynamics
from ..native import compiled
from ..native.compiled import call as _call
from ..native.compiled import hold_efforts as _hold_efforts
from ..native.compiled import KINDS as _KINDS
from ..native.compiled import rigid_base_state as _rigid_base_state
from ..native.layout import NOT_FINITE
from ..native.plant_layout import RK4_ROWS, RK4_SMALL

__all__ = ['RigidBodyPlant']

_K_HOLD = _KINDS['hold_efforts']


def _rotation(q):
    """Rotation matrix of a unit quaternion (w, x, y, z)."""
    w, x, y, z = q.tolist() if isinstance(q, np.ndarray) else q
    return np.array(_unit_quaternion_rotation(x, y, z, w)).reshape(3, 3)


def _quaternion_rate(q, w):
    """d/dt of the unit quaternion q (w, x, y, z) of a frame turning at w (3,), in that frame."""
    a, b, c, d = q
    x, y, z = w
    return 0.5 * np.array(
        [
            -b * x - c * y - d * z,
            a * x + c * z - d * y,
            a * y - b * z + d * x,
            a * z + b * y - c * x,
        ]
    )


class RigidBodyPlant:
    """
    The robot's forward dynamics integrated by RK4 (see the module docstring).

    ``robot``: a :class:`~spart_ros.core.model.Robot`; ``base``: 'fixed' or 'floating';
    ``gravity`` (3,), world frame [m/s^2]; ``dt`` [s] (rounded to 1 ns); ``joint_dynamics``:
    the joints' declared damping, friction and armature act; ``initial``:
    :class:`~spart_ros.sim.plant.InitialState` (joint values by name, the base link's pose in the
    world and, floating, its twist in b; with a URDF ``world`` root, the pose of that root, as
    the MuJoCo plant takes it).  ``set_efforts`` holds joint efforts (``joint_names`` order)
    until the next call.  ``actuators``: the base's reaction wheels and thrusters
    (:class:`~spart_ros.core.actuators.BaseActuators` or its YAML file; the robot must have the
    wheels' joints: :func:`~spart_ros.core.actuators.add_wheels`), applied by :attr:`actuation`
    (:mod:`.actuation`): the wheel motor torques add to the joint efforts, the thrusters' wrench
    (fixed in the base, evaluated at each RK4 stage) is the base's generalized force.
    ``orbit``: a :class:`~spart_ros.core.orbit.CircularOrbit` (see the module
    docstring; None: empty space or uniform gravity, as before).  ``target``: a free-flying target
    (a :class:`~spart_ros.core.target.Target` or what :func:`~spart_ros.core.target.load_target`
    reads), integrated beside the robot and made a payload of ``grasp_link`` (default: the robot's
    first leaf link) at the grasp (:attr:`target`,
    :class:`~spart_ros.sim.target_body.RigidBodyTarget`), or None.
    """

    def __init__(
        self,
        robot,
        base='fixed',
        gravity=(0.0, 0.0, -9.81),
        dt=1e-3,
        joint_dynamics=True,
        initial=None,
        actuators=None,
        orbit=None,
        target=None,
        grasp_link=None,
    ):
        if base not in BASE_MODES:
            raise InputError(f"base must be 'fixed' or 'floating', got {base!r}")
        self.robot = robot
        self.floating = base == 'floating'
        gravity = _vector('gravity', gravity, 3)
        self.orbit = checked_orbit(orbit, self.floating, gravity)
        self._joint_dynamics = bool(joint_dynamics)
        self.fast = fast_dynamics(robot, gravity, joint_dynamics=joint_dynamics)
        self.joint_names = tuple(robot.coordinates.names)
        self.sorted_joint_names = tuple(sorted(self.joint_names))
        self.n_joints = len(self.joint_names)
        self._index = {n: k for k, n in enumerate(self.joint_names)}
        dt = float(dt)
        if not np.isfinite(dt) or dt <= 0:
            raise InputError(f'dt must be a positive number of seconds, got {dt}')
        self._dt_ns = int(round(dt * 1e9))
        if self._dt_ns <= 0:
            raise InputError(f'dt must be at least 1 ns, got {dt}')
        self._time_ns = 0
        self.base_link = robot.base_link.name
        self.mount = (
            np.eye(4) if robot.base_pose is None else np.asarray(robot.base_pose, dtype=float)
        )
        self._efforts = np.zeros(self.n_joints)
        self._every_index = np.arange(self.n_joints, dtype=np.intp)  # (hold_command's kernel)
        self._zero6 = np.zeros(6)
        T = np.asarray(robot.base_link.T, dtype=float)
        self._R_bc, self._p_bc = T[:3, :3].copy(), T[:3, 3].copy()  # base CoM frame in b
        self._R_cb = self._R_bc.T.copy()
        self.initial = InitialState() if initial is None else initial
        self.actuation = None
        # what the effectors hold over a step: joint efforts, a base wrench fixed in the base CoM
        # frame [torque; force]; their staged loads (SPART's wF0, wFm)
        self._taum, self._tau0, self._wrench, self._thrust = (
            np.zeros(self.n_joints),
            np.zeros(6),
            np.zeros(6),
            False,
        )
        self._wF0, self._wFm = np.zeros(6), np.zeros((6, self.fast.n))
        # the compiled RK4 step (a robot without mimic joints: full = independent coordinates)
        self._kernel = compiled.rigid_body_steps if isinstance(self.fast, FastDynamics) else None
        size = (13 if self.floating else 0) + 2 * self.n_joints
        self._x = np.zeros(size)
        self._x_velocities = self._x[size - self.n_joints :]
        self._work, self._small = np.zeros((RK4_ROWS, size)), np.zeros(RK4_SMALL)
        self._fd, self._done = np.zeros(6 + self.n_joints), np.zeros(1, dtype=np.int64)
        #: the units applied at each step besides the robot's dynamics (:mod:`.effectors`)
        self.effectors = []
        self._deciding, self._staged = [], []
        self._compiled, self._orbit_row = self._kernel is not None, orbit_row(None)
        if self.orbit is not None:
            loads = OrbitLoads(self.orbit)
            loads.attach_rk4(robot)
            self.add_effector(loads)
        attach_rk4(self, actuators)
        #: a free-flying target (:class:`~spart_ros.sim.target_body.RigidBodyTarget`) or None
        self.target = None
        self._robot = robot  # the robot without a payload (a reset returns to it)
        if target is not None:
            from .target_body import grasp_link as _grasp_link
            from .target_body import RigidBodyTarget

            wheels = self.actuation.actuators.wheels if self.actuation is not None else []
            link = _grasp_link(robot, grasp_link, [w.rotor for w in wheels])
            self.target = RigidBodyTarget(target, link, self.orbit)
            self.target.attach_rk4(self)
            self.add_effector(self.target)
        self.reset()
        #: the joints' damping and friction, applied implicitly (None: RK4 on the model's FD)
        self.dissipation = None
        self.notes = []
        if joint_dynamics:
            dissipation = JointDissipation.of_robot(robot, self.fast.model.friction_velocity)
            rate, joint = self.damping_rate()
            if dissipation.has_friction or rate * dt > RK4_DAMPING_LIMIT:
                self.dissipation = dissipation
                self._free = fast_dynamics(robot, self.fast.gravity)  # FD's bias without them
                self.notes.append(
                    'joint '
                    + (
                        'friction'
                        if dissipation.has_friction
                        else f'damping too stiff for RK4 (rate x dt = {rate * dt:.3g}, mostly '
                        f'joint {joint!r})'
                    )
                    + ': stepped by the implicit dissipation step instead of RK4 (stable whatever '
                    'the inertia; spart_ros.sim.joint_dissipation)'
                )

    @property
    def integrator(self):
        """Return 'RK4', or 'dissipation' where the joints' dissipation needs the implicit step."""
        return 'RK4' if self.dissipation is None else 'dissipation'

    def damping_rate(self):
        """
        Return the fastest damping rate and the joint it moves most: (rate [1/s], joint name).

        The rate is the largest eigenvalue of M^-1 D at the current state (M the joint-space
        inertia with armature, with the base free on a floating base; D the joints' damping,
        independent coordinates), the decay rate of the fastest damped motion; the joint dominates
        its eigenvector ((0.0, None) without damping). RK4 needs rate x dt below its stability
        bound (2.785).
        """
        damping = self.fast.model.damping
        if not np.any(damping > 0.0):
            return 0.0, None
        G = np.asarray(self.robot.coordinates.G)  # full <- independent (identity without mimics)
        D = G.T @ np.diag(damping) @ G
        H = self.fast.mass_matrix(self._R0, self._r0, self._q)
        M = (
            H[6:, 6:] - H[6:, :6] @ np.linalg.solve(H[:6, :6], H[:6, 6:])
            if self.floating
            else H[6:, 6:]
        )
        rate, k = fastest_damping(M, D)
        return rate, self.joint_names[k]

    # -- properties ---------------------------------------------------------------------
    @property
    def dt(self):
        return self._dt_ns * 1e-9

    @property
    def dt_ns(self):
        return self._dt_ns

    @property
    def time_ns(self):
        return self._time_ns

    @property
    def time(self):
        return self._time_ns * 1e-9

    @property
    def gravity(self):
        return self.fast.gravity

    @property
    def efforts(self):
        return self._efforts.copy()

    def joint_index(self, name):
        """Return the position of joint ``name`` in ``joint_names`` (InputError if unknown)."""
        try:
            return self._index[name]
        except KeyError:
            raise InputError(
                f'unknown joint {name!r}: the joints are {list(self.joint_names)}'
            ) from None

    # -- inputs ---------------------------------------------------------------------------
    def set_efforts(self, efforts):
        """
        Hold joint efforts (n_joints,) [N m or N] in ``joint_names`` order.

        InputError for a wrong length or a non-finite value: the previous ones stay applied.
        """
        e = np.asarray(efforts, dtype=float).reshape(-1)
        if e.shape != self._efforts.shape:
            raise InputError(
                f'expected {self.n_joints} efforts for joints {list(self.joint_names)}, got '
                f'{e.size}'
            )
        if not np.all(np.isfinite(e)):
            raise InputError(f'non-finite effort in {e.tolist()}')
        self._efforts[:] = e

    def hold_command(self, command, values):
        """
        Hold the efforts of a command: ``set_efforts(command.accept(values))`` in one call.

        ``command``: the :class:`~spart_ros.sim.commands.EffortCommand` mapping ``values`` onto
        this plant's joints.  Compiled for float64 values (the MuJoCo plant's kernel, its
        ``qfrc`` the efforts themselves); the same checks and errors as ``accept`` otherwise
        (CommandRejected when it refuses them: nothing changed).
        """
        efforts = self._efforts
        held = _call(
            _hold_efforts,
            _K_HOLD,
            values,
            command._index,
            command.efforts,
            efforts,
            efforts,
            self._every_index,
        )
        if held == 0:
            command.accepted += 1
        else:  # not float64, or rejected: accept says why
            self.set_efforts(command.accept(values))

    def reset(self, initial=None):
        """Back to ``initial`` (default ``self.initial``) with zero efforts; the time goes on."""
        initial = self.initial if initial is None else initial
        q = np.zeros(self.n_joints)
        u = np.zeros(self.n_joints)
        for values, out, what in (
            (initial.joint_positions, q, 'joint_positions'),
            (initial.joint_velocities, u, 'joint_velocities'),
        ):
            for name, value in dict(values).items():
                out[self.joint_index(name)] = _vector(f'{what}[{name!r}]', [value], 1)[0]
        p = _vector('base_position', initial.base_position, 3)
        R = quaternion_from_ros(*_vector('base_orientation', initial.base_orientation, 4))
        v_b = _vector('base_linear_velocity', initial.base_linear_velocity, 3)
        w_b = _vector('base_angular_velocity', initial.base_angular_velocity, 3)
        if not self.floating and (v_b.any() or w_b.any()):
            raise InputError(
                'a fixed base has no velocity: base_linear_velocity and base_angular_velocity '
                'must be zero'
            )
        R_b, p_b = R @ self.mount[:3, :3], p + R @ self.mount[:3, 3]
        if self.orbit is not None:  # given in LVLH now: into N
            R_b, p_b, v_b, w_b = self.orbit.from_lvlh(self.time, R_b, p_b, v_b, w_b)
        R0, r0, u0 = bs.base_from_link_frame(self.robot, R_b, p_b, v_b, w_b)
        self._quat = _quaternion(R0)
        self._r0 = np.array(r0, dtype=float)
        self._u0 = np.array(u0, dtype=float)
        self._q, self._u = q, u
        self._R0 = _rotation(self._quat)
        self._efforts[:] = 0.0
        for effector in self.effectors:
            effector.reset()

    # -- dynamics -------------------------------------------------------------------------
    # The state is one vector x: floating [quaternion (w, x, y, z) of R0, r0, q, u0, u], fixed [q,
    # u].

    def _pack(self):
        if self.floating:
            return np.concatenate([self._quat, self._r0, self._q, self._u0, self._u])
        return np.concatenate([self._q, self._u])

    def _unpack(self, x):
        n = self.n_joints
        y = x.copy()  # one copy; the parts are views of it (a new one each time)
        if self.floating:
            quat = y[0:4]  # np.linalg.norm of a real vector: sqrt(dot(x, x)), without its checks
            quat /= math.sqrt(quat.dot(quat))
            self._quat, self._r0 = quat, y[4:7]
            self._q, self._u0, self._u = y[7 : 7 + n], y[7 + n : 13 + n], y[13 + n :]
        else:
            self._q, self._u = y[0:n], y[n:]
        self._R0 = _rotation(self._quat)

    def add_effector(self, effector):
        """
        Apply ``effector`` (an :class:`~spart_ros.sim.effectors.Effector`) at every step from now.

        Its :meth:`~spart_ros.sim.effectors.Effector.decide` runs before each step (with the joint
        velocities), its held loads add to the step's efforts and base wrench, a staged one's at
        every stage (compiled when the step knows it, else its ``rk4_stage``).
        """
        if effector is not None:  # (None: only the compiled step re-evaluated)
            self.effectors.append(effector)
            if type(effector).decide is not Effector.decide:
                self._deciding.append(effector)
            if effector.staged:
                self._staged.append(effector)
        rows = [e.rk4_kernel_orbit() for e in self._staged]
        self._compiled = (
            self._kernel is not None and len(rows) <= 1 and all(r is not None for r in rows)
        )
        self._orbit_row = rows[0] if rows else orbit_row(None)

    def _decide(self, t, velocities):
        """Let the effectors decide what they apply over the step from ``t``; hold their loads."""
        for effector in self._deciding:
            effector.decide(t, velocities)
        self._decide_held()

    def _actuator_loads(self, R0):
        """(tau0 (6,), taum (n,)): the base's generalized force and the joint efforts held."""
        if not self._thrust:
            return self._zero6, self._taum
        w = self._wrench  # [torque; force] in the base CoM frame: tau0 = [torque; R0 force]
        self._tau0[0:3] = w[0:3]
        self._tau0[3:6] = R0 @ w[3:6]
        return self._tau0, self._taum

    def _loads(self, t, R0, r0, q, u0, u):
        """Return the staged effectors' (wF0, wFm) at this stage, or (None, None) without any."""
        if not self._staged:
            return None, None
        self._wF0.fill(0.0)
        self._wFm.fill(0.0)
        for effector in self._staged:
            effector.rk4_stage(self.fast, t, R0, r0, q, u0, u, self._wF0, self._wFm)
        return self._wF0, self._wFm

    def _rates(self, x, t=0.0):
        """dx/dt at x (time ``t`` [s]) under the held loads (:meth:`_decide`)."""
        n = self.n_joints
        out = np.empty_like(x)
        if not self.floating:
            q, u = x[0:n], x[n:]
            _, udot = self.fast.forward_dynamics(
                self._R0,
                self._r0,
                q,
                self._zero6,
                u,
                self._zero6,
                self._taum,
                floating=False,
            )
            out[0:n], out[n:] = u, udot
            return out
        quat, r0, q, u0, u = x[0:4], x[4:7], x[7 : 7 + n], x[7 + n : 13 + n], x[13 + n :]
        R0 = _rotation(quat / np.linalg.norm(quat))
        tau0, taum = self._actuator_loads(R0)
        wF0, wFm = self._loads(t, R0, r0, q, u0, u)
        u0dot, udot = self.fast.forward_dynamics(
            R0, r0, q, u0, u, tau0, taum, wF0, wFm, floating=True
        )
        out[0:4] = _quaternion_rate(quat, u0[0:3])
        out[4:7] = u0[3:6]
        out[7 : 7 + n] = u
        out[7 + n : 13 + n] = u0dot
        out[13 + n :] = udot
        return out

    def _accelerations(self, quat, r0, q, u0, u):
        R0 = _rotation(quat)
        self._decide_held()
        tau0, taum = self._actuator_loads(R0)
        wF0, wFm = self._loads(self.time, R0, r0, q, u0, u) if self.floating else (None, None)
        u0dot, udot = self.fast.forward_dynamics(
            R0,
            r0,
            q,
            u0 if self.floating else self._zero6,
            u,
            tau0 if self.floating else self._zero6,
            taum,
            wF0,
            wFm,
            floating=self.floating,
        )
        return u0dot.copy(), udot.copy()

    def _decide_held(self):
        """Hold the loads of what the effectors decided last (their commands now, no decision)."""
        np.copyto(self._taum, self._efforts)
        self._wrench.fill(0.0)
        if not self.effectors:  # no base wrench
            self._thrust = False
            return
        for effector in self.effectors:
            effector.rk4_held(self._taum, self._wrench)
        self._thrust = bool(self._wrench[3:6].any())

    def _implicit_step(self, h):
        """
        Take one step with the joints' dissipation implicit (module docstring).

        The effectors' loads (held and staged) are taken at the step's start (first order, as the
        rest of the dynamics in this step).
        """
        n, fast = self.n_joints, self.fast
        t = self.time
        self._decide(t, self._u)
        tau0, taum = self._actuator_loads(self._R0)
        wF0, wFm = (
            self._loads(t, self._R0, self._r0, self._q, self._u0, self._u)
            if self.floating
            else (None, None)
        )
        H = fast.mass_matrix(self._R0, self._r0, self._q)  # with the armature
        b0, bm = self._free.bias_forces(
            self._R0, self._r0, self._q, self._u0, self._u, wF0, wFm, floating=self.floating
        )
        if self.floating:
            r = np.concatenate([tau0 - b0, taum - bm])
            v, mean = self.dissipation.step(
                H, r, np.concatenate([self._u0, self._u]), h, slice(6, 6 + n)
            )
            u0, u = v[0:6], v[6:]
            w = mean[0:3]
            angle = np.linalg.norm(w) * h
            if angle > 0.0:  # the base turns by exp(w h) in its own frame
                axis = w / np.linalg.norm(w)
                turn = np.concatenate([[np.cos(0.5 * angle)], np.sin(0.5 * angle) * axis])
                self._quat = _multiply(self._quat, turn)
                self._quat /= np.linalg.norm(self._quat)
            self._r0 = self._r0 + h * mean[3:6]
            self._u0 = u0
            self._R0 = _rotation(self._quat)
            mean = mean[6:]
        else:
            u, mean = self.dissipation.step(H[6:, 6:], taum - bm, self._u, h, slice(0, n))
        self._q = self._q + h * mean
        self._u = u

    def dissipation_forces(self):
        """Return the joints' damping and friction efforts (n_joints,) at the velocities now."""
        if self.dissipation is not None:
            return self.dissipation.forces(self._u)
        return self.fast.joint_friction(self._u).copy()

    def _diverged(self, h):
        from .plant import SimulationDiverged

        held = self._efforts.tolist()
        self.reset()
        return SimulationDiverged(
            f'the simulation diverged before t = {self.time + h:.6f} s (efforts {held}): back to '
            'the initial state, efforts zero'
        )

    def step(self, n=1):
        """
        Advance ``n`` steps of ``dt`` (RK4, or the implicit step) with the held efforts.

        Return the number of steps taken (``n``).  RK4 runs compiled
        (:func:`spart_ros.native.plant_kernels.rigid_body_steps`, the numpy stages written out:
        the same results) unless the robot has mimic joints or an effector has no compiled form.
        """
        h, n = self.dt, int(n)
        if self.target is not None and n > 0:  # the free target's own state, the same steps
            self.target.advance(self.time, n, h)
        if self.dissipation is not None:
            for _ in range(n):
                self._implicit_step(h)
                if not (np.all(np.isfinite(self._u)) and np.all(np.isfinite(self._q))):
                    raise self._diverged(h)
                self._time_ns += self._dt_ns
            return n
        if self._compiled:
            return self._compiled_steps(n)
        return self._rk4_steps(n)

    # -- a payload (a grasped target) -------------------------------------------------------------
    def _carry_payload(self, robot, u0, u):
        """Take ``robot`` (this one with a payload: the same joints) and velocities u0, ``u``."""
        self._use_robot(robot)
        self._u0 = np.array(u0, dtype=float)
        self._u = np.array(u, dtype=float)

    def _release_payload(self):
        """Back to the robot without the payload (a reset; the state is set after)."""
        self._use_robot(self._robot)

    def _use_robot(self, robot):
        """Rebuild what depends on the model's links: the fast path, the loads' bodies."""
        self.robot = robot
        gravity = self.fast.gravity.copy()
        self.fast = fast_dynamics(robot, gravity, joint_dynamics=self._joint_dynamics)
        self._kernel = compiled.rigid_body_steps if isinstance(self.fast, FastDynamics) else None
        self._wFm = np.zeros((6, self.fast.n))
        for effector in self.effectors:
            if isinstance(effector, OrbitLoads):
                effector.attach_rk4(robot)
        if self.dissipation is not None:
            self._free = fast_dynamics(robot, gravity)
        self.add_effector(None)  # re-evaluate the compiled step

    def _rk4_steps(self, n, decided=False):
        """
        RK4 in numpy: stages of the core's forward dynamics (the reference the kernel follows).

        ``decided``: the effectors decided the first step already.
        """
        h = self.dt
        x = self._pack()
        velocities = x[13 + self.n_joints :] if self.floating else x[self.n_joints :]
        for k in range(n):
            t = self.time  # the stages' times matter only to staged loads
            if k or not decided:
                self._decide(t, velocities)
            k1 = self._rates(x, t)
            k2 = self._rates(x + (0.5 * h) * k1, t + 0.5 * h)
            k3 = self._rates(x + (0.5 * h) * k2, t + 0.5 * h)
            k4 = self._rates(x + h * k3, t + h)
            new = x + (h / 6.0) * (k1 + 2.0 * (k2 + k3) + k4)
            if not np.all(np.isfinite(new)):
                raise self._diverged(h)
            if self.floating:
                new[0:4] /= np.linalg.norm(new[0:4])
            x[:] = new
            self._time_ns += self._dt_ns
        self._unpack(x)
        return n

    def _compiled_steps(self, n):
        """Take ``n`` compiled RK4 steps: one kernel call (one a step when an effector decides)."""
        x = self._x
        np.copyto(x, self._pack())
        fast = self.fast
        done = self._done
        per_step = bool(self._deciding)
        remaining = n
        while remaining > 0:
            steps = 1 if per_step else remaining
            self._decide(self.time, self._x_velocities)
            code = self._kernel(
                fast._mi,
                fast._mf,
                fast._W,
                x,
                steps,
                self._time_ns,
                self._dt_ns,
                self.floating,
                self._R0,
                self._r0,
                self._taum,
                self._wrench,
                self._orbit_row,
                fast._gravity,
                self._work,
                self._small,
                self._fd,
                self._wF0,
                self._wFm,
                done,
            )
            self._time_ns += int(done[0]) * self._dt_ns
            remaining -= int(done[0])
            if code == NOT_FINITE:
                raise self._diverged(self.dt)
            if code:  # the forward dynamics refused the state: the numpy step says why
                self._unpack(x)
                self._rk4_steps(remaining, decided=True)
                return n
        self._unpack(x)
        return n

    # -- readouts (ROS conventions) -------------------------------------------------------------
    def joint_positions(self):
        """Return the joint positions (n_joints,) in ``joint_names`` order (a copy)."""
        return self._q.copy()

    def joint_velocities(self):
        """Return the joint velocities (n_joints,) in ``joint_names`` order (a copy)."""
        return self._u.copy()

    def spart_state(self):
        """Return (R0 (3, 3), r0 (3,), u0 (6,)): the base in SPART's conventions (copies)."""
        return self._R0.copy(), self._r0.copy(), self._u0.copy() if self.floating else np.zeros(6)

    def base_link_state(self):
        """
        Return (R_b (3, 3), p_b (3,), v_b (3,), w_b (3,)).

        The base link's pose in the world and its twist in b (REP 105), new arrays (the exact
        inverse of SPART's base state conversion); with an orbit, in LVLH (twist relative to it).
        """
        out = np.empty((3, 3)), np.empty(3), np.empty(3), np.empty(3)
        orbit = self.orbit
        _rigid_base_state(  # compiled: _base_link_state, then orbit.to_lvlh's
            self._R0,
            self._r0,
            self._u0,
            self._R_cb,
            self._p_bc,
            self.floating,
            _NO_ORBIT if orbit is None else _orbit_row(orbit),
            self.time,
            orbit is not None,
            *out,
        )
        return out

    def _base_link_state(self):
        """Return the base link's pose and twist in SPART's inertial frame (N with an orbit)."""
        R_b = self._R0 @ self._R_cb
        rho = R_b @ self._p_bc
        if not self.floating:
            return R_b, self._r0 - rho, np.zeros(3), np.zeros(3)
        w_b = self._R_bc @ self._u0[0:3]
        v_b = R_b.T @ (self._u0[3:6] - np.cross(R_b @ w_b, rho))
        return R_b, self._r0 - rho, v_b, w_b

    def odometry(self):
        """
        Return the :class:`~spart_ros.sim.plant.BaseOdometry` of the base link (REP 105).

        The twist in b.  With an orbit: pose in LVLH, twist relative to LVLH.
        """
        R_b, p_b, v_b, w_b = self.base_link_state()
        return BaseOdometry(p_b, _rotation_quaternion(R_b), v_b, w_b)

    def base_rotation(self):
        """Return R_b (3, 3): base link frame -> world (-> LVLH with an orbit)."""
        if self.orbit is not None:
            return self.orbit.lvlh_rotation(self.time).T @ self._R0 @ self._R_cb
        return self._R0 @ self._R_cb

    def joint_accelerations(self):
        """Return (n_joints,) at this state under the held efforts."""
        return self._accelerations(self._quat, self._r0, self._q, self._u0, self._u)[1]

    def base_acceleration(self):
        """
        Return (a_b, alpha_b): the base link origin's classical and the angular acceleration.

        Both expressed in b (zero for a fixed base), at this state under the held efforts; with an
        orbit, relative to N (as :meth:`~spart_ros.sim.plant.MujocoPlant.base_acceleration`).
        """
        if not self.floating:
            return np.zeros(3), np.zeros(3)
        u0dot, _ = self._accelerations(self._quat, self._r0, self._q, self._u0, self._u)
        R_b, _, _, w_b = self._base_link_state()
        alpha_b = self._R_bc @ u0dot[0:3]
        rho = R_b @ self._p_bc  # base link origin -> base CoM
        w, alpha = R_b @ w_b, R_b @ alpha_b
        a = u0dot[3:6] - np.cross(alpha, rho) - np.cross(w, np.cross(w, rho))
        return R_b.T @ a, alpha_b

    def momentum(self):
        """
        Return [L about the world origin; p] (6,), world frame, of the whole robot (floating base).

        With an orbit: in N, about the reference point.
        """
        from ..core.momentum import about_point

        H = self.fast.mass_matrix(self._R0, self._r0, self._q)  # independent coordinates: T' H T
        h0 = H[0:6, 0:6] @ self._u0 + H[0:6, 6:] @ self._u
        return about_point(h0, self._R0, self._r0, np.zeros(3), 'RigidBodyPlant.momentum', [])


def _multiply(a, b):
    """Return the quaternion product a b, both (w, x, y, z)."""
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return np.array(
        [
            w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
            w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
            w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
            w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
        ]
    )


def _quaternion(R):
    """Return unit quaternion (w, x, y, z) of a rotation matrix."""
    x, y, z, w = quaternion_to_ros(R)
    return np.array([w, x, y, z], dtype=float)
