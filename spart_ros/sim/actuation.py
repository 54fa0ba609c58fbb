"""
The base's reaction wheel motors and thrusters as a plant applies them: an effector (no ROS).

:class:`BaseActuation` is the part of a plant's step shared by the MuJoCo plant
(:class:`~spart_ros.sim.plant.MujocoPlant`: MuJoCo actuators, ``data.ctrl``) and the RK4 plant
(:class:`~spart_ros.sim.rigid_body.RigidBodyPlant`: joint efforts and a base wrench), a held
:class:`~spart_ros.sim.effectors.Effector`: it holds
the commands as ros2_control's forward command controllers give them (one value per actuator of
a group, :mod:`spart_ros.core.actuators` order), and before every physics step decides what
each actuator applies during that step (compiled: :func:`spart_ros.native.plant_kernels.
base_actuators_step`, the rules below written out):

- a **reaction wheel motor** applies its commanded torque [N m] on the rotor (the base feels the
  reaction), clamped to +- ``max_torque``; at its speed limit it applies no torque that would
  spin the rotor faster: the torque is bounded so that the rotor's speed relative to the base
  after the step, ``w + (tau - friction w) dt / J_s``, stays within +- ``max_speed`` (the base's
  own acceleration aside).  Each clamp is counted (``torque_limited``, ``speed_limited``);
- a **thruster** pushes along its direction at its point (fixed in the base: the plants evaluate
  the direction at each integration stage) with a force held over the step: a throttled one
  ``clip(command, 0, max_force)``; an on/off one ``max_force`` while its valve is open.  The
  valve opens at the first step whose command is > 0 and closes at the first step whose command
  is <= 0, but not before ``min_impulse / max_force`` s after it opened (the minimum impulse
  bit).  Impulse [N s], firings (valve openings, or a throttled thruster going from 0 to a
  force) and propellant [kg] = impulse / (Isp g0) are accumulated.

Commands are held until the next one (as ros2_control's hardware holds them); a message of the
wrong length or with a NaN/infinite value raises
:class:`~spart_ros.sim.commands.CommandRejected` and the previous command stays.
"""

from collections import namedtuple

import numpy as np

from .commands import CommandRejected
from .effectors import Effector
from ..core.actuators import G0
from ..core.errors import InputError
from ..native.compiled import finite_c1 as _finite_c1

__all__ = ['BaseActuation', 'WheelReading', 'ThrusterReading']

WheelReading = namedtuple(
    'WheelReading',
    'names positions speeds torques commanded torque_limited speed_limited',
)
WheelReading.__doc__ = """The reaction wheels (declaration order): joint ``names``; rotor
``positions`` [rad] and ``speeds`` [rad/s] relative to the base; ``torques`` the motor torques
applied over the last step [N m]; ``commanded`` the held commands; ``torque_limited``,
``speed_limited`` (n_w,) steps whose torque the torque limit or the speed limit clamped."""

ThrusterReading = namedtuple(
    'ThrusterReading', 'names commanded forces firing impulse firings propellant'
)
ThrusterReading.__doc__ = """The thrusters (declaration order): ``names``; the held
``commanded`` values [N]; ``forces`` applied over the last step [N]; ``firing`` (bool, the valve
open / force > 0 in the last step); cumulative ``impulse`` [N s] and ``firings`` (count) per
thruster; ``propellant`` [kg] used by all of them."""

#: s: two times closer than this are the same (the plants count integer nanoseconds)
_EPS = 1e-10


class BaseActuation(Effector):
    """
    Wheel motors and thrusters of one plant (see the module docstring).

    ``actuators``: :class:`~spart_ros.core.actuators.BaseActuators`; ``wheel_index`` (n_w,): the
    plant's joint index of each wheel's joint; ``dt``: the physics step [s].  A plant binds it
    with :func:`attach_mujoco` or :func:`attach_rk4` (which set where the wheels' speeds are in
    its velocity vector and, on MuJoCo, its actuators' ids).
    """

    def __init__(self, actuators, wheel_index, dt):
        from ..native import compiled

        self.actuators = actuators
        w, t = actuators.wheels, actuators.thrusters
        self.n_wheels, self.n_thrusters = len(w), len(t)
        self.wheel_index = np.asarray(wheel_index, dtype=np.intp)
        self.dt = float(dt)
        #: (4, n_w): max_torque, max_speed, rotor inertia, friction (the kernel's rows)
        self._wheels = np.array(
            [
                [x.max_torque for x in w],
                [x.max_speed for x in w],
                [x.rotor_inertia for x in w],
                [x.friction for x in w],
            ],
            dtype=float,
        ).reshape(4, -1)
        self.max_torque, self.max_speed, self.rotor_inertia, self.friction = self._wheels
        #: (3, n_t): max_force, min_on_time, throttled (1.0 / 0.0)
        self._thrusters = np.array(
            [
                [x.max_force for x in t],
                [x.min_on_time for x in t],
                [1.0 if x.throttled else 0.0 for x in t],
            ],
            dtype=float,
        ).reshape(3, -1)
        self.max_force, self.min_on_time = self._thrusters[0], self._thrusters[1]
        self.throttled = self._thrusters[2] != 0.0
        #: (3, n_t) positions and directions in the base link frame
        self.thruster_positions = np.array([x.position for x in t], dtype=float).reshape(-1, 3).T
        self.thruster_directions = np.array([x.direction for x in t], dtype=float).reshape(-1, 3).T
        self.flow = 1.0 / (actuators.specific_impulse * G0)  # kg per N s
        self._kernel = compiled.base_actuators_step
        # where the wheels' speeds are in the plant's velocity vector, and MuJoCo's actuator ids
        # (none: the RK4 plant): set by attach_mujoco / attach_rk4
        self._speed_index = self.wheel_index.astype(np.int64)
        self._ctrl_wheels = self._ctrl_thrusters = np.zeros(0, dtype=np.int64)
        self._ctrl = np.zeros(0)
        self._wrench_map = np.zeros((6, self.n_thrusters))  # thrust -> base CoM frame wrench
        self.reset()

    def reset(self):
        """Zero the commands and what is applied (the counters go on: a plant reset)."""
        self.wheel_commands = np.zeros(self.n_wheels)
        self.wheel_torques = np.zeros(self.n_wheels)
        self.thruster_commands = np.zeros(self.n_thrusters)
        self.thruster_forces = np.zeros(self.n_thrusters)
        self._opened_at = np.full(self.n_thrusters, np.nan)  # s; NaN: closed
        if not hasattr(self, 'impulse'):
            self.impulse = np.zeros(self.n_thrusters)
            self.firings = np.zeros(self.n_thrusters, dtype=np.int64)
            self._counts = np.zeros((2, self.n_wheels), dtype=np.int64)
            self.torque_limited, self.speed_limited = self._counts  # views: the kernel's rows

    @property
    def propellant(self):
        """Propellant used so far [kg]."""
        return float(self.impulse.sum() * self.flow)

    # -- commands -------------------------------------------------------------------------
    def _checked(self, what, names, values):
        v = np.asarray(values, dtype=float).reshape(-1)
        if v.size == len(names) and _finite_c1(np.ascontiguousarray(v)):  # (compiled)
            return v
        if v.size != len(names):
            raise CommandRejected(
                f'{what}: expected {len(names)} values for {list(names)}, got {v.size}', 'length'
            )
        if not np.all(np.isfinite(v)):
            bad = [names[i] for i in np.flatnonzero(~np.isfinite(v))]
            raise CommandRejected(
                f'{what}: non-finite value for {bad} in {v.tolist()}', 'non-finite'
            )
        return v

    def set_wheel_torques(self, values):
        """Hold the wheels' motor torque commands ``values`` (n_w,) [N m], declaration order."""
        self.wheel_commands[:] = self._checked(
            'reaction wheel torques', self.actuators.wheel_names, values
        )

    def set_thruster_commands(self, values):
        """Hold the thrusters' commands ``values`` (n_t,) [N] (on/off: > 0 opens the valve)."""
        self.thruster_commands[:] = self._checked(
            'thruster commands', self.actuators.thruster_names, values
        )

    # -- one physics step -----------------------------------------------------------------
    def before_step(self, t, wheel_speeds):
        """
        Decide the wheel torques and thruster forces applied over the step from time ``t`` [s].

        ``wheel_speeds`` (n_w,): the rotors' speeds relative to the base at ``t``.  Returns
        (wheel torques (n_w,), thruster forces (n_t,)), this object's arrays.
        """
        speeds = np.ascontiguousarray(wheel_speeds, dtype=float).reshape(-1)
        self._decide(float(t), speeds, np.arange(self.n_wheels, dtype=np.int64), False)
        return self.wheel_torques, self.thruster_forces

    def decide(self, t, velocities):
        """
        Decide what is applied over the step from time ``t`` (the Effector interface).

        ``velocities``: the plant's velocity vector (MuJoCo's ``qvel``, the RK4 plant's joint
        velocities), where the wheels' speeds are at the index its attach set; on MuJoCo the
        results also go to ``data.ctrl``.
        """
        self._decide(t, velocities, self._speed_index, True)

    def _decide(self, t, velocities, index, to_ctrl):
        empty = self._ctrl_wheels[:0]
        self._kernel(
            t,
            self.dt,
            velocities,
            index,
            self._wheels,
            self.wheel_commands,
            self.wheel_torques,
            self._counts,
            self._thrusters,
            self.thruster_commands,
            self._opened_at,
            self.thruster_forces,
            self.firings,
            self.impulse,
            self._ctrl,
            self._ctrl_wheels if to_ctrl else empty,
            self._ctrl_thrusters if to_ctrl else empty,
        )

    def thruster_wrench(self, R_b=None):
        """
        Return the thrusters' wrench over the step: (torque about b's origin, force), both in b.

        ``R_b``: not used (the wrench is fixed in b); for symmetry with plants that need it.
        """
        f = self.thruster_forces
        force = self.thruster_directions @ f
        torque = np.cross(self.thruster_positions.T, (self.thruster_directions * f).T).sum(axis=0)
        return torque, force

    def rk4_held(self, taum, wrench):
        """Add the wheel torques to ``taum`` and the thrusters' wrench (base CoM frame)."""
        taum[self.wheel_index] += self.wheel_torques
        forces = self.thruster_forces
        if self.n_thrusters and forces.any():  # (closed valves add zeros: the same wrench)
            wrench += self._wrench_map @ forces

    # -- readouts -------------------------------------------------------------------------
    def wheel_reading(self, positions, speeds):
        """Return the :data:`WheelReading` with the rotors' ``positions`` and ``speeds``."""
        return WheelReading(
            tuple(self.actuators.wheel_names),
            np.asarray(positions, dtype=float).copy(),
            np.asarray(speeds, dtype=float).copy(),
            self.wheel_torques.copy(),
            self.wheel_commands.copy(),
            self.torque_limited.copy(),
            self.speed_limited.copy(),
        )

    def thruster_reading(self):
        """Return the :data:`ThrusterReading`."""
        return ThrusterReading(
            tuple(self.actuators.thruster_names),
            self.thruster_commands.copy(),
            self.thruster_forces.copy(),
            self.thruster_forces > 0.0,
            self.impulse.copy(),
            self.firings.copy(),
            self.propellant,
        )


def wheel_joint_index(actuators, joint_names):
    """(n_w,) index of each wheel's joint in ``joint_names`` (InputError when one is missing)."""
    names = list(joint_names)
    missing = [n for n in actuators.wheel_names if n not in names]
    if missing:
        raise InputError(f'reaction wheels {missing} are not joints of the plant ({names})')
    return np.array([names.index(n) for n in actuators.wheel_names], dtype=np.intp)


def add_mujoco_actuators(mujoco, spec, actuators, base_link):
    """
    Add the base's actuators to a MuJoCo model spec (before it is compiled).

    One ``motor`` per wheel on its joint (gear 1: ``ctrl`` = the motor torque [N m]) and one
    site per thruster on the base body (its z axis along the thrust, at its point) with a
    ``general`` actuator on it (``ctrl`` = the force [N], along the site's z axis: fixed in the
    base at every integration stage), in that order: wheels, then thrusters.  No control limits:
    the clamps are :class:`BaseActuation`'s.
    """
    from ..core.actuators import frame_z_along

    base = spec.body(base_link)
    for w in actuators.wheels:
        act = spec.add_actuator()
        act.name = f'{w.name}_motor'
        act.trntype = mujoco.mjtTrn.mjTRN_JOINT
        act.target = w.name
        act.gear = [1.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    for t in actuators.thrusters:
        quat = np.empty(4)
        mujoco.mju_mat2Quat(quat, np.ascontiguousarray(frame_z_along(t.direction)).reshape(9))
        site = base.add_site()
        site.name = f'{t.name}_site'
        site.pos = list(t.position)
        site.quat = list(quat)
        site.size = [0.02, 0.02, 0.02]
        act = spec.add_actuator()
        act.name = t.name
        act.trntype = mujoco.mjtTrn.mjTRN_SITE
        act.target = site.name
        act.gear = [0.0, 0.0, 1.0, 0.0, 0.0, 0.0]


def urdf_with_wheels(source, actuators, xacro_args=None):
    """
    Return (URDF text or ``source``, actuators, MuJoCo spec extension) for a plant.

    ``actuators``: :class:`~spart_ros.core.actuators.BaseActuators`, its YAML file, or None (then
    ``source`` is returned as it is, with no extension).
    """
    from ..core.actuators import add_wheels, load_actuators
    from ..core.urdf import urdf_text

    actuators = load_actuators(actuators)
    if actuators is None or not (actuators.wheels or actuators.thrusters):
        return source, None, None
    text = add_wheels(urdf_text(source, xacro_args), actuators)

    def extend(mujoco, spec, robot):
        add_mujoco_actuators(mujoco, spec, actuators, robot.base_link.name)

    return text, actuators, extend


def _initial_wheel_speeds(plant, actuators):
    """Start the wheels at their declared ``initial_speed`` unless the initial state names them."""
    from dataclasses import replace

    speeds = {w.name: w.initial_speed for w in actuators.wheels if w.initial_speed}
    if speeds:
        plant.initial = replace(
            plant.initial, joint_velocities={**speeds, **plant.initial.joint_velocities}
        )


def attach_mujoco(plant, actuators):
    """Give a :class:`~spart_ros.sim.plant.MujocoPlant` its :class:`BaseActuation` (or none)."""
    if actuators is None:
        return
    actuation = BaseActuation(actuators, wheel_joint_index(actuators, plant.joint_names), plant.dt)
    m = plant.model
    actuation._ctrl_wheels = np.array(
        [m.actuator(f'{w.name}_motor').id for w in actuators.wheels], dtype=np.int64
    )
    actuation._ctrl_thrusters = np.array(
        [m.actuator(t.name).id for t in actuators.thrusters], dtype=np.int64
    )
    actuation._ctrl = plant.data.ctrl
    actuation._wheel_vadr = plant._vadr[actuation.wheel_index]
    actuation._wheel_qadr = plant._qadr[actuation.wheel_index]
    actuation._speed_index = actuation._wheel_vadr.astype(np.int64)  # in qvel
    plant.actuation = actuation
    plant.add_effector(actuation)
    _initial_wheel_speeds(plant, actuators)
    plant.reset()


def attach_rk4(plant, actuators):
    """Give a :class:`~spart_ros.sim.rigid_body.RigidBodyPlant` its :class:`BaseActuation`."""
    from ..core.actuators import load_actuators

    actuators = load_actuators(actuators)
    if actuators is None or not (actuators.wheels or actuators.thrusters):
        return
    actuators.check_robot(plant.robot)
    actuation = BaseActuation(actuators, wheel_joint_index(actuators, plant.joint_names), plant.dt)
    # a thruster's force -> [torque about the base CoM; force] in the base CoM frame c:
    # R_cb (p x d - p_bc x d), R_cb d (p, d: its point and direction in b)
    T = np.asarray(plant.robot.base_link.T, dtype=float)
    R_bc, p_bc = T[:3, :3], T[:3, 3]
    p, d = actuation.thruster_positions, actuation.thruster_directions
    arm = p - p_bc[:, None]
    actuation._wrench_map = np.vstack([R_bc.T @ np.cross(arm.T, d.T).T, R_bc.T @ d])
    plant.actuation = actuation
    plant.add_effector(actuation)
    _initial_wheel_speeds(plant, actuators)


def wheel_reading(plant):
    """Return the :data:`WheelReading` of either plant (None without actuators)."""
    a = plant.actuation
    if a is None:
        return None
    return a.wheel_reading(
        plant.joint_positions()[a.wheel_index], plant.joint_velocities()[a.wheel_index]
    )
