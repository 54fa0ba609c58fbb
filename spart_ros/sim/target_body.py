"""
A free-flying target in a plant: a body of its own, then welded to the robot at the grasp.

The target of a capture (:class:`~spart_ros.core.target.Target`: mass, inertia, grapple fixture,
initial pose and twist) is one more unit of a plant (:mod:`.effectors`), never actuated, under the
same orbit (or gravity) as the robot, with a state of its own (:meth:`TargetBody.state`: a
:data:`~spart_ros.core.target.TargetState` in the plant's world frame, N with an orbit):

- **MuJoCo** (:class:`MujocoTarget`): a body with a free joint added to the model before it
  compiles (its inertial: ``mass``, ``ipos`` = the CoM in l, the principal moments and axes; a
  site at the fixture; no geom: no contact), integrated by MuJoCo's integrator with the robot, the
  orbit's loads on it as on every body (:class:`~.orbit_environment.OrbitLoads`); and a **weld
  equality** between the grasping link's body and the target, inactive until the grasp, when
  :meth:`MujocoTarget.attach` sets its relative pose to the one at that instant and activates it.
  The weld is a soft constraint (MuJoCo's): a time constant of 2 dt (MuJoCo's stiffest advised,
  as the plant's mimic joints) and an impedance of 0.999-0.9999 (it settles in about 30 ms, holds
  the pose to a fraction of a millimetre); the momentum of robot + target moves by what MuJoCo's
  integrator leaves (test/test_capture_plants.py).  A controller must treat it as the compliant
  grasp it is: its period several times the weld's time constant (the main job's capture: dt
  0.5 ms, control at 100 Hz; at dt 1 ms the wrist's damping chatters against the weld);
- **RK4** (:class:`RigidBodyTarget`): a state integrated beside the robot's with the plant's step
  (:class:`~spart_ros.core.free_body.FreeBody`: Euler's equations, the orbit's tidal force and
  gravity-gradient torque, RK4 at the plant's ``dt``: the robot and the target do not interact
  before the grasp, so one RK4 of both is two RK4s); at the grasp the plant's robot becomes the
  robot with the target as a payload of the grasping link (:func:`~spart_ros.core.payload.
  attach_payload`, the relative pose of that instant) and the velocities jump as a plastic impact
  with internal impulses (:func:`~spart_ros.core.payload.attachment_velocities`: the momentum of
  robot + target kept to rounding).

Readouts (both): :meth:`TargetBody.odometry` (the target link frame l as nav_msgs/Odometry: pose
in the world, LVLH with an orbit; twist of l in l, relative to LVLH), :meth:`TargetBody.momentum`
([angular momentum about N's origin; linear momentum], world), :func:`system_momentum` (robot +
target), :attr:`TargetBody.grasp` (the :data:`Grasp`, None before it).  A plant reset puts the
target back at its initial state, released.  Pure numpy and MuJoCo; no ROS.
"""

from collections import namedtuple

import numpy as np

from .effectors import Effector
from ..core.attitude import _cross  # np.cross costs 8 times as much on 3-vectors
from ..core.errors import InputError
from ..core.free_body import FreeBody
from ..core.target import (
    load_target,
    quaternion_from_rotation,
    rotation_from_quaternion,
    Target,
    TargetState,
)

__all__ = [
    'TargetBody',
    'MujocoTarget',
    'RigidBodyTarget',
    'Grasp',
    'system_momentum',
    'grasp_link',
    'checked_target',
    'PoseEstimator',
    'SETTLE',
    'Odometry',
]

#: s after the weld at which the MuJoCo plant's grasp impulse is read (MujocoTarget.settle): the
#: weld's transient (its time constant 2 dt) is over
SETTLE = 0.01

Grasp = namedtuple('Grasp', 'time T_link_target impulse momentum_before momentum_after')
Grasp.__doc__ = """The grasp as the plant made it: ``time`` [s]; ``T_link_target`` (4, 4): the
target's link frame l in the grasping link's URDF frame (what the weld holds); ``impulse`` (6,)
[angular about the target's CoM; linear] the target received [N m s; N s], world (the RK4 plant's
exact impact; on MuJoCo filled in after the weld's transient, :meth:`MujocoTarget.settle`);
``momentum_before``, ``momentum_after`` (6,): robot + target [L about N's origin; P] just before
and just after (:func:`system_momentum`)."""


Odometry = namedtuple('Odometry', 'position orientation linear angular')
Odometry.__doc__ = """nav_msgs/Odometry content of a target's link frame l (the fields of
:data:`spart_ros.sim.plant.BaseOdometry`): position (3,) of l's origin in the world (LVLH with an
orbit), orientation (x, y, z, w) of l, linear (3,) velocity of l's origin and angular (3,)
velocity, both in l (relative to LVLH with an orbit)."""


def _quaternion(R):
    """Return the ROS quaternion (x, y, z, w), w >= 0, of a rotation matrix (4,)."""
    return np.asarray(quaternion_from_rotation(np.ascontiguousarray(R, dtype=float)), float)


def checked_target(target):
    """Return ``target`` as a :class:`~spart_ros.core.target.Target` (load_target's inputs)."""
    return target if isinstance(target, Target) else load_target(target)


def grasp_link(robot, link=None, exclude=()):
    """
    Return the name of the link that grasps: ``link``, or the robot's first leaf link.

    ``robot``: a :class:`~spart_ros.core.model.Robot`; ``exclude``: link names that do not grasp
    (the reaction wheels' rotors). InputError naming the links when ``link`` is not one of them.
    """
    from ..core.connectivity import leaf_links

    names = list(robot.link_names)
    if link:
        if link not in names:
            raise InputError(f'grasp link {link!r} is not a link of {robot.name!r} ({names})')
        return link
    leaves = [n for n in leaf_links(robot) if n not in set(exclude)]
    if not leaves:
        raise InputError(f'robot {robot.name!r} has no link to grasp with: name one (grasp_link)')
    return leaves[0]


def _state_of_link(target, R, p, v_origin, w_body):
    """Return the TargetState of l's pose (R, p), its origin's velocity (world), w (body)."""
    com = target.com
    omega = R @ w_body
    rho = R @ com
    return TargetState(R, p + rho, v_origin + _cross(omega, rho), w_body)


class TargetBody(Effector):
    """
    The target as a unit of a plant (see the module docstring); the plant binds it.

    ``target``: a :class:`~spart_ros.core.target.Target` (or load_target's input); ``link``: the
    grasping link's name; ``orbit``: the plant's orbit (None: none).  ``grasp``: the
    :data:`Grasp` once made, else None.
    """

    def __init__(self, target, link, orbit=None):
        self.target = checked_target(target)
        self.link = None if link is None else str(link)
        self.orbit = orbit
        self.grasp = None
        self.plant = None

    @property
    def attached(self):
        """Return True after the grasp (the target moves with the link)."""
        return self.grasp is not None

    # -- what every plant gives -------------------------------------------------------------
    def state(self):
        """Return the target's :data:`~spart_ros.core.target.TargetState` now (world, N)."""
        raise NotImplementedError

    def link_pose(self):
        """Return (R (3, 3), p (3,)): the grasping link's URDF frame in the world (N) now."""
        raise NotImplementedError

    def initial_state(self, t):
        """Return the target's initial state (world, N) at time ``t`` [s] from its declaration."""
        R_b, p_b, _, _ = self.plant.base_link_state()  # LVLH with an orbit, as declared
        return self.target.initial_state((R_b, p_b), self.orbit, t)

    def odometry(self):
        """
        Return the :data:`Odometry` of the target's link frame l.

        REP 105: pose of l in the world (LVLH with an orbit), twist of l in l (relative to LVLH).
        """
        R, p, v_l, w_l = self.target.odometry(self.state())
        if self.orbit is not None:
            R, p, v_l, w_l = self.orbit.to_lvlh(self.plant.time, R, p, v_l, w_l)
        return Odometry(np.asarray(p, float), _quaternion(R), v_l, w_l)

    def momentum(self):
        """Return the target's [angular momentum about N's origin; linear momentum] (6,)."""
        return self.target.momentum(self.state())

    def relative_pose(self):
        """Return T (4, 4): the target's link frame l in the grasping link's URDF frame now."""
        R_e, p_e = self.link_pose()
        s = self.state()
        T = np.eye(4)
        T[:3, :3] = R_e.T @ s.R
        T[:3, 3] = R_e.T @ (s.r - s.R @ self.target.com - p_e)
        return T


def system_momentum(plant):
    """
    Return robot + target [angular momentum about N's origin; linear momentum] (6,), world.

    ``plant``: a MuJoCo or RK4 plant with a target (or without: the robot's).  In N with an orbit.
    """
    m = plant.momentum()
    h = (
        np.concatenate([m.angular_origin, m.linear])
        if hasattr(m, 'angular_origin')
        else np.asarray(m, dtype=float).copy()
    )
    target = getattr(plant, 'target', None)
    if target is not None and not (target.attached and target.payload_in_robot):
        h = h + target.momentum()
    return h


# -- MuJoCo ---------------------------------------------------------------------------------------
class MujocoTarget(TargetBody):
    """
    The target on the MuJoCo plant: a free body and the weld (module docstring).

    Built before the model compiles (:meth:`extend` adds its body, site and weld to the spec),
    bound to the plant by :meth:`attach_mujoco`.  ``body`` (its MuJoCo body id), ``equality`` (the
    weld's id), ``qpos``, ``qvel`` (slices of its free joint in MuJoCo's arrays).
    """

    #: the target's body is MuJoCo's: after the grasp the robot's bodies do not include it
    payload_in_robot = False

    def extend(self, mujoco, spec, robot, dt):
        """
        Add the target's body, its fixture site and the (inactive) weld to ``spec``.

        ``mujoco``: the module; ``spec``: the MjSpec before it compiles; ``robot``: the core's
        model of the URDF (its link names); ``dt``: the plant's step [s] (the weld's time constant
        is 2 dt).
        """
        t = self.target
        names = set(robot.link_names)
        if t.name in names:
            raise InputError(
                f'target {t.name!r}: the robot has a link of that name: rename the target'
            )
        moments, axes = np.linalg.eigh(np.asarray(t.inertia, dtype=float))
        if np.linalg.det(axes) < 0:
            axes[:, 2] = -axes[:, 2]
        iquat = np.empty(4)
        mujoco.mju_mat2Quat(iquat, np.ascontiguousarray(axes).reshape(9))
        body = spec.worldbody.add_body(name=t.name)
        body.add_freejoint(name=f'{t.name}_free')
        body.mass = float(t.mass)
        body.ipos = [float(x) for x in t.com]
        body.inertia = [float(x) for x in moments]
        body.iquat = [float(x) for x in iquat]
        body.explicitinertial = True
        fq = np.empty(4)
        mujoco.mju_mat2Quat(fq, np.ascontiguousarray(t.fixture[:3, :3]).reshape(9))
        body.add_site(name=t.fixture_name, pos=[float(x) for x in t.fixture[:3, 3]], quat=list(fq))
        eq = spec.add_equality(
            name=f'{t.name}_grasp',
            type=mujoco.mjtEq.mjEQ_WELD,
            name1=self.link,
            name2=t.name,
            objtype=mujoco.mjtObj.mjOBJ_BODY,
        )
        eq.active = False
        data = [0.0] * len(eq.data)
        data[6], data[10] = 1.0, 1.0  # identity relpose (set at the grasp), torquescale 1
        eq.data = data
        eq.solref = [2.0 * float(dt), 1.0]  # MuJoCo's stiffest advised: 2 steps
        eq.solimp = [0.999, 0.9999, 0.001, 0.5, 2.0]  # settles in ~30 ms (0.9, 0.95: 0.3 s)

    def attach_mujoco(self, plant):
        """Bind to a built :class:`~spart_ros.sim.plant.MujocoPlant` (its model has the body)."""
        m = plant.model
        mj = plant._mj
        self.plant, self._mj = plant, mj
        self.body = mj.mj_name2id(m, mj.mjtObj.mjOBJ_BODY, self.target.name)
        joint = mj.mj_name2id(m, mj.mjtObj.mjOBJ_JOINT, f'{self.target.name}_free')
        self.equality = mj.mj_name2id(m, mj.mjtObj.mjOBJ_EQUALITY, f'{self.target.name}_grasp')
        self._link_body = mj.mj_name2id(m, mj.mjtObj.mjOBJ_BODY, self.link)
        a, b = int(m.jnt_qposadr[joint]), int(m.jnt_dofadr[joint])
        self.qpos, self.qvel = slice(a, a + 7), slice(b, b + 6)
        self._body = FreeBody(self.target, self.orbit, None if self.orbit else m.opt.gravity)

    def reset(self):
        """Back to the initial state (at the plant's time now), released."""
        if self.plant is None:
            return
        d = self.plant.data
        self.plant.model.eq_data[self.equality, 3:10] = (0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0)
        d.eq_active[self.equality] = 0
        self.grasp = None
        self._set(self.initial_state(d.time))

    def _set(self, s):
        """Put the target's free joint at the TargetState ``s`` (world)."""
        d = self.plant.data
        R, w = np.asarray(s.R, float), np.asarray(s.w, float)
        rho = R @ self.target.com
        x, y, z, qw = quaternion_from_rotation(R)
        d.qpos[self.qpos] = [*(np.asarray(s.r, float) - rho), qw, x, y, z]
        d.qvel[self.qvel] = [*(np.asarray(s.v, float) - _cross(R @ w, rho)), *w]

    def state(self):
        d = self.plant.data
        qp, qv = d.qpos[self.qpos], d.qvel[self.qvel]
        R = rotation_from_quaternion([qp[4], qp[5], qp[6], qp[3]])
        return _state_of_link(self.target, R, qp[0:3].copy(), qv[0:3].copy(), qv[3:6].copy())

    def link_pose(self):
        plant = self.plant
        plant._mj.mj_kinematics(plant.model, plant.data)
        d = plant.data
        return d.xmat[self._link_body].reshape(3, 3).copy(), d.xpos[self._link_body].copy()

    def advance_held(self, t, n, h):
        """Integrate the free target ``n`` steps of ``h`` from ``t`` while the robot is held."""
        if self.attached:
            return
        x = FreeBody.pack(self.state())
        for k in range(n):
            x = self._body._rk4(t + k * h, x, h)
        self._set(FreeBody.unpack(x))

    def attach(self):
        """
        Weld the target to the grasping link where it is now; return the :data:`Grasp`.

        The weld's relative pose is the one now (MuJoCo's ``relpose``: the target body's origin
        and orientation in the link body's frame); InputError when attached already.
        """
        if self.attached:
            raise InputError(f'target {self.target.name!r} is attached already')
        plant, mj = self.plant, self._mj
        m, d = plant.model, plant.data
        mj.mj_kinematics(m, d)
        R1, p1 = d.xmat[self._link_body].reshape(3, 3), d.xpos[self._link_body]
        R2, p2 = d.xmat[self.body].reshape(3, 3), d.xpos[self.body]
        rel = np.empty(4)
        mj.mju_mat2Quat(rel, np.ascontiguousarray(R1.T @ R2).reshape(9))
        m.eq_data[self.equality, 0:3] = 0.0
        m.eq_data[self.equality, 3:6] = R1.T @ (p2 - p1)
        m.eq_data[self.equality, 6:10] = rel
        m.eq_data[self.equality, 10] = 1.0
        before = system_momentum(plant)
        self._before = self.momentum()
        d.eq_active[self.equality] = 1
        plant._fresh = False
        self.grasp = Grasp(plant.time, self.relative_pose(), None, before, before.copy())
        return self.grasp

    def settle(self):
        """
        Return the :data:`Grasp` with its ``impulse`` and ``momentum_after``, after the transient.

        The target's momentum change and robot + target's momentum now (call some ten steps
        after :meth:`attach`: the weld pulls the two together over its time constant, 2 dt).
        """
        if self.grasp is None:
            return None
        now = self.momentum()
        # the angular part about the target's CoM (the linear impulse's moment taken out)
        r = self.state().r
        dl = now[0:3] - self._before[0:3] - _cross(r, now[3:6] - self._before[3:6])
        impulse = np.concatenate([dl, now[3:6] - self._before[3:6]])
        self.grasp = self.grasp._replace(
            impulse=impulse, momentum_after=system_momentum(self.plant)
        )
        return self.grasp


# -- the RK4 plant --------------------------------------------------------------------------------
class RigidBodyTarget(TargetBody):
    """
    The target on the RK4 plant: a state beside the robot's, then a payload (module docstring).

    ``target``, ``link``, ``orbit``: as :class:`TargetBody`.  Bound by :meth:`attach_rk4`; the
    plant calls :meth:`advance` with each of its steps.
    """

    def __init__(self, target, link, orbit=None):
        super().__init__(target, link, orbit)
        self._x = None

    @property
    def payload_in_robot(self):
        """Return True when the plant's robot carries the target (after the grasp)."""
        return self.attached

    def attach_rk4(self, plant):
        """Bind to ``plant`` (a :class:`~spart_ros.sim.rigid_body.RigidBodyPlant`, not reset)."""
        self.plant = plant
        self._link_id = plant.robot.keys.link_id[self.link]
        self._body = FreeBody(self.target, self.orbit, None if self.orbit else plant.gravity)

    def reset(self):
        """Back to the initial state (at the plant's time now), released."""
        if self.plant is None:
            return
        if self.grasp is not None:
            self.plant._release_payload()
            self.grasp = None
        self._x = FreeBody.pack(self.initial_state(self.plant.time))

    def advance(self, t, n, h):
        """Integrate ``n`` RK4 steps of ``h`` [s] from time ``t`` (before the grasp)."""
        if self.attached:
            return
        x, rk4 = self._x, self._body._rk4
        for k in range(n):
            x = rk4(t + k * h, x, h)
        self._x = x

    def state(self):
        if not self.attached:
            return FreeBody.unpack(self._x)
        plant = self.plant
        fast, k = plant.fast, plant.robot.keys.link_id[self.target.name]
        R0, r0, u0 = plant.spart_state()
        rL, tL, _ = fast.twists(R0, r0, plant._q, u0, plant._u)
        R_c = fast.link_pose(k)[0].copy()
        return TargetState(R_c, rL[:, k].copy(), tL[3:6, k].copy(), R_c.T @ tL[0:3, k])

    def link_pose(self):
        plant = self.plant
        fast, i = plant.fast, plant.robot.keys.link_id[self.link]
        R0, r0, _ = plant.spart_state()
        fast.mass_matrix(R0, r0, plant._q)  # the kinematics at this state
        R_c, d = (a.copy() for a in fast.link_pose(i))
        T_c = np.asarray(plant.robot.link(i).T, dtype=float)  # the link's CoM frame in its frame
        R_l = R_c @ T_c[:3, :3].T
        return R_l, r0 + d - R_l @ T_c[:3, 3]

    def attach(self):
        """
        Make the target a payload of the grasping link where it is now; return the :data:`Grasp`.

        The plant's robot becomes the robot with the payload, its velocities those just after a
        plastic impact (momentum kept to rounding).  InputError when attached already.
        """
        if self.attached:
            raise InputError(f'target {self.target.name!r} is attached already')
        from ..core.payload import attach_payload, attachment_velocities

        plant, t = self.plant, self.target
        before = system_momentum(plant)
        T = self.relative_pose()
        pose = T.copy()
        pose[:3, 3] = T[:3, 3] + T[:3, :3] @ t.com  # the target's CoM frame (l's axes)
        robot = plant.robot
        combined = attach_payload(robot, self.link, t.mass, t.inertia, pose, name=t.name)
        s = self.state()
        R0, r0, u0 = plant.spart_state()
        jump = attachment_velocities(
            robot,
            combined,
            R0,
            r0,
            plant._q,
            u0,
            plant._u,
            np.concatenate([s.R @ s.w, s.v]),
            name=t.name,
        )
        plant._carry_payload(combined, jump.u0, jump.um)
        self.grasp = Grasp(plant.time, T, jump.impulse, before, None)
        self.grasp = self.grasp._replace(momentum_after=system_momentum(plant))
        return self.grasp

    def settle(self):
        """Return the :data:`Grasp` (exact at the attachment here)."""
        return self.grasp


class PoseEstimator:
    """
    The target's odometry as a pose estimator gives it: every ``period``, noisy, late.

    ``period`` [s]: one estimate per period of the plant's time (0: at every call); ``noise``:
    4 standard deviations (position [m], world axes; attitude [rad], a rotation vector in l;
    linear and angular velocity [m/s, rad/s], in l) or None (exact); ``delay`` [s]: an estimate of
    the state at t is given out at t + delay (stamped t: when it was measured); ``seed``: the
    noise's generator.  :meth:`observe` takes the plant's odometry at each call and returns the
    estimates due then, oldest first.
    """

    def __init__(self, period=0.0, noise=None, delay=0.0, seed=0):
        self.period = float(period)
        self.delay = float(delay)
        if not (np.isfinite(self.period) and self.period >= 0):
            raise InputError(f'target estimate period: expected seconds >= 0, got {period!r}')
        if not (np.isfinite(self.delay) and self.delay >= 0):
            raise InputError(f'target estimate delay: expected seconds >= 0, got {delay!r}')
        s = np.zeros(4) if noise is None or len(noise) == 0 else np.asarray(noise, dtype=float)
        if s.shape != (4,) or not np.all(np.isfinite(s)) or np.any(s < 0):
            raise InputError(
                'target estimate noise: expected 4 standard deviations >= 0 (position m, attitude '
                f'rad, linear m/s, angular rad/s), got {noise!r}'
            )
        self.noise = s
        self.rng = np.random.default_rng(int(seed))
        self.reset()

    def reset(self):
        """Forget the estimates not given out yet (a plant reset)."""
        self._next = -np.inf
        self._queue = []

    def _noisy(self, odom):
        """Return ``odom`` (an :data:`Odometry`) with the estimate's noise added."""
        from ..core.rigid_motion import rotation_from_vector

        s = self.noise
        if not s.any():
            return odom
        g = self.rng.standard_normal(12)
        R = rotation_from_quaternion(odom.orientation) @ rotation_from_vector(s[1] * g[3:6])
        return Odometry(
            np.asarray(odom.position, float) + s[0] * g[0:3],
            _quaternion(R),
            np.asarray(odom.linear, float) + s[2] * g[6:9],
            np.asarray(odom.angular, float) + s[3] * g[9:12],
        )

    def observe(self, t, odometry):
        """
        Return [(stamp [s], :data:`Odometry`)] due at plant time ``t`` [s].

        ``odometry``: the plant's odometry of the target now (a callable returning it: called only
        when an estimate is taken).
        """
        if t >= self._next - 1e-12:
            self._next = t + self.period if self.period > 0 else -np.inf
            self._queue.append((t, self._noisy(odometry())))
        due = [e for e in self._queue if e[0] <= t - self.delay + 1e-12]
        if due:
            self._queue = self._queue[len(due) :]
        return due
