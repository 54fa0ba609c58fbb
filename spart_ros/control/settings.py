"""
The settings of a :class:`~spart_ros.control.controller.Controller` (pure Python, no ROS).

:class:`ControllerSettings` holds every setting of the controller and of its laws, with the
defaults the ``spart_controller`` node declares its parameters with (its parameter table
takes them from here: one set of defaults).  Settings are either *structural* (the mode, the
command joints, a space mode's end effector...: they shape the law and take a reconfigure) or
*run-time* (:data:`RUN_TIME`: gains, effort limits, timeouts and tolerances: changed between
two ticks by :meth:`Controller.apply_settings`).

Per-joint settings (gains, ``effort_limits``, ``max_tracking_error``, the default
``path_tolerance``
and ``goal_tolerance`` of trajectory goals) take one value for every command joint or one per
command joint, in ``command_joints`` order.
"""

from dataclasses import dataclass, fields, replace
import math

import numpy as np

from ..core.errors import InputError

__all__ = [
    'ControllerSettings',
    'RUN_TIME',
    'PER_JOINT',
    'GAINS',
    'TOLERANCES',
    'DEFAULT_MODES',
    'modes_for_base',
    'per_joint',
]

#: the mode of a controller whose ``mode`` is '' (unset): by its base, {floating: mode}
DEFAULT_MODES = {False: 'computed_torque', True: 'floating_base'}

#: settings a controller takes at run time, between two ticks (the others need a reconfigure)
RUN_TIME = (
    'friction_compensation',
    'kp',
    'kd',
    'ki',
    'integral_limit',
    'effort_limits',
    'base_gains',
    'state_timeout',
    'reference_timeout',
    'resume_tolerance',
    'max_tracking_error',
    'limit_tolerance',
    'jump_tolerance',
    'path_tolerance',
    'goal_tolerance',
    'stopped_velocity_tolerance',
    'goal_time',
    'impedance_stiffness',
    'impedance_damping',
    'cartesian_stiffness',
    'cartesian_damping',
    'nullspace_stiffness',
    'nullspace_damping',
    'mpc_deadline',
)
#: the PD(+I) gains, the integral bound and the joint impedance: one value or one per command joint
GAINS = ('kp', 'kd', 'ki', 'integral_limit', 'impedance_stiffness', 'impedance_damping')
#: one value for all command joints or one per command joint
PER_JOINT = GAINS + ('effort_limits', 'max_tracking_error', 'path_tolerance', 'goal_tolerance')
#: per-joint settings that are tolerances (>= 0, 0 = not checked)
TOLERANCES = ('max_tracking_error', 'path_tolerance', 'goal_tolerance')


def modes_for_base(floating):
    """
    Return the names of the modes whose law runs on a floating (True) or fixed (False) base.

    The package's modes and the registered ones that load (one that does not is left out here;
    naming it as ``mode`` says why).
    """
    from .modes import mode_class, mode_names

    base, names = 'floating' if floating else 'fixed', []
    for name in mode_names():
        try:
            if mode_class(name).base == base:
                names.append(name)
        except InputError:
            continue
    return names


def _space_modes():
    from .space_modes import SPACE_LAWS

    return tuple(SPACE_LAWS)


def _floats(name, value):
    """Return a number or a sequence of numbers -> list of floats (InputError naming ``name``)."""
    try:
        return [
            float(x) for x in (value if isinstance(value, (list, tuple, np.ndarray)) else [value])
        ]
    except (TypeError, ValueError):
        raise InputError(
            f'{name}: expected a number or a list of numbers, got {value!r}'
        ) from None


def per_joint(name, value, names, allow_inf=False, minimum=0.0):
    """
    Return (len(names),) array of the setting ``name``.

    One value for all, or one per command joint ``names``; every value finite (or +inf with
    ``allow_inf``) and >= ``minimum``.
    """
    values = _floats(name, value)
    if len(values) not in (1, len(names)):
        raise InputError(
            f'{name}: expected one value or one per command joint ({len(names)}: {list(names)}), '
            f'got {len(values)}'
        )
    a = np.array(values * len(names) if len(values) == 1 else values, dtype=float)
    bad = np.isnan(a) | (a < minimum) | (np.isinf(a) & ~np.asarray(allow_inf))
    if bad.any():
        raise InputError(
            f'{name}: every value must be a {"" if allow_inf else "finite "}number >= '
            f'{minimum:g}, got {values}'
        )
    return a


@dataclass
class ControllerSettings:
    """
    Every setting of a controller (see the module docstring; units SI, angles rad).

    Structural: ``mode`` (:func:`spart_ros.control.modes.mode_names`; '' takes the base's,
    :data:`DEFAULT_MODES`: computed_torque on a fixed base, floating_base on a floating one),
    ``floating`` (the
    inputs carry a moving base state: odometry), ``command_joints`` (the effort controller's
    joints in its order; empty = :func:`spart_ros.core.mimic.command_joints`), ``event_driven``
    (one command per new joint-state stamp; False: ticks on a timer), ``joint_dynamics`` (the
    laws compensate the joints' damping, friction and rotor inertia the model declares:
    :mod:`spart_ros.core.joint_friction`), the end effector and the laws' options.  Run-time:
    :data:`RUN_TIME`.  Every other field is the ``spart_controller`` parameter of the same name:
    its meaning, unit and range are in the node's reference.
    """

    mode: str = ''  # '' = by the base (DEFAULT_MODES): computed_torque, floating_base
    floating: bool = False
    command_joints: tuple = ()
    event_driven: bool = True
    joint_dynamics: bool = True  # compensate the declared joint friction, damping, armature
    # the part of the declared Coulomb friction the laws compensate (0..1; 1: the model's, as the
    # embedded plants apply it; below 1 on a robot whose drives compensate friction themselves)
    friction_compensation: float = 1.0
    # the PD(+I) law: 1/s^2, 1/s, 1/s^3, rad s (one value or one per command joint)
    kp: object = 100.0
    kd: object = 20.0
    ki: object = 0.0
    integral_limit: object = 0.1
    effort_limits: tuple = ()  # empty = the URDF <limit effort>
    base_gains: tuple = (
        1.0,
        2.0,
        1.0,
        2.0,
    )  # free_flying: kp, kd of the position, of the attitude
    # impedance modes (spart_ros.control.impedance)
    impedance_stiffness: object = (
        100.0  # joint_impedance: N m/rad or N/m, one or per command joint
    )
    impedance_damping: object = (
        5.0  # joint_impedance: N m s/rad or N s/m, one or per command joint
    )
    cartesian_stiffness: tuple = (
        10.0,
        10.0,
        10.0,
        300.0,
        300.0,
        300.0,
    )  # [rotation N m/rad; translation N/m]
    cartesian_damping: tuple = ()  # 6 or 36 values; empty = 2 sqrt(cartesian_stiffness)
    nullspace_stiffness: float = 10.0  # 1/s^2, mass-weighted posture spring
    nullspace_damping: float = -1.0  # 1/s; < 0 = 2 sqrt(nullspace_stiffness)
    # safety
    state_timeout: float = 0.1  # s
    resume_tolerance: float = 0.05  # rad or m
    max_tracking_error: object = 0.2  # rad or m, one or per command joint; 0 = no check
    limit_tolerance: float = 1e-4  # rad or m beyond a URDF position limit still accepted
    jump_tolerance: float = 0.05  # rad or m beyond what the velocities allow between two states
    # trajectory goals' default tolerances (JointTrajectoryController's constraints;
    # spart_ros.control.tolerances)
    path_tolerance: object = 0.0  # rad or m, one or per command joint; 0 = not checked
    goal_tolerance: object = 0.0  # rad or m, one or per command joint; 0 = not checked
    stopped_velocity_tolerance: float = 0.01  # rad/s or m/s at the end of an action goal
    goal_time: float = 0.0  # s after the end to meet the goal tolerance; 0 = no limit
    # space-robot modes
    command_interface: str = 'effort'
    ee_link: str = ''
    ee_offset: tuple = (0.0, 0.0, 0.0)
    task_rows: tuple = ()
    damping: float = 0.05
    singular_region: float = 0.01
    max_joint_rates: tuple = ()
    velocity_gain: float = 10.0
    pose_gain: float = 1.0
    attitude_gain: float = 1.0
    base_rows: tuple = (0, 1, 2)
    priority: str = 'end_effector'
    reactionless_attitude_only: bool = True
    reference_timeout: float = 0.5  # s
    path_sample_period: float = (
        0.05  # s: a pose goal in a joint mode: IK every this along the path
    )
    # the base's reaction wheels and thrusters (spart_ros.control.base_actuation)
    actuators_file: str = ''  # their YAML (spart_ros.core.actuators); '' = none
    thruster_period: float = 0.1  # s: a thruster cycle (pulse-width modulation)
    momentum_dump: tuple = (0.6, 0.2, 0.05)  # start, stop (of the speed limit), gain 1/s
    # model-predictive control (modes mpc, floating_mpc: spart_ros.control.mpc)
    mpc_horizon: float = 0.5  # s
    mpc_steps: int = 25  # steps over the horizon
    mpc_period: float = 0.01  # s between two solves
    mpc_deadline: float = 0.008  # s: a slower solve is not used (computed torque instead)
    # costs: task position, task velocity, acceleration, base attitude, base angular velocity
    # (1/rad^2 or 1/m^2, s^2/rad^2, s^4/rad^2, 1/rad^2, s^2/rad^2); the first three as kp 100,
    # kd 20 of the PD law when nothing limits the plan
    mpc_weights: tuple = (1.6e4, 300.0, 1.0, 0.0, 0.0)
    mpc_task: str = 'joint'  # 'joint' or 'end_effector' (ee_link's point, in the base frame)
    mpc_posture_weight: float = 10.0  # 1/rad^2: the joint error in an end-effector task
    # the capture of a tumbling target (spart_ros.control.capture_control)
    target_file: object = ''  # its YAML or URDF (spart_ros.core.target), or a Target; '' = none
    capture_base: str = ''  # 'held' (the wheels hold the attitude), 'free'; '' = held with wheels

    def __post_init__(self):
        """Take the base's default mode (:data:`DEFAULT_MODES`) when ``mode`` is ''."""
        if self.mode == '':
            self.mode = DEFAULT_MODES[bool(self.floating)]

    def replace(self, **changes):
        """Return a copy with ``changes`` (InputError for an unknown name)."""
        names = {f.name for f in fields(self)}
        unknown = sorted(set(changes) - names)
        if unknown:
            raise InputError(f'unknown controller settings {unknown}')
        return replace(self, **changes)

    def check(self):
        """
        Return these settings, checked: InputError names the first value no controller can use.

        Checks that need no model; :meth:`Controller.configure` checks the rest against the model.
        """
        from .modes import mode_class

        law = mode_class(self.mode)  # InputError naming the modes
        if (law.base == 'floating') != bool(self.floating):
            base = 'floating' if self.floating else 'fixed'
            raise InputError(
                f'mode {self.mode} needs base: {law.base} (got base: {base}); the modes for a '
                f'{base} base: {", ".join(modes_for_base(self.floating))}: set the parameter '
                f'mode to one (mode:={DEFAULT_MODES[bool(self.floating)]} on a launch command '
                f"line), or leave it unset ('') for {DEFAULT_MODES[bool(self.floating)]}"
            )
        if self.command_interface not in law.interfaces:
            raise InputError(
                f'command_interface {self.command_interface} needs a mode that outputs it; mode '
                f'{self.mode} outputs {list(law.interfaces)}'
            )
        for name in (
            'state_timeout',
            'reference_timeout',
            'path_sample_period',
            'thruster_period',
            'mpc_horizon',
            'mpc_period',
            'mpc_deadline',
        ):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
                raise InputError(f'{name} must be a finite number of seconds > 0, got {value!r}')
        for name in (
            'resume_tolerance',
            'limit_tolerance',
            'jump_tolerance',
            'stopped_velocity_tolerance',
            'goal_time',
        ):
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
                raise InputError(f'{name} must be a finite number >= 0, got {value!r}')
        if not (isinstance(self.mpc_steps, int) and 2 <= self.mpc_steps <= 1000):
            raise InputError(f'mpc_steps must be an integer in 2..1000, got {self.mpc_steps!r}')
        if self.mpc_task not in ('joint', 'end_effector'):
            raise InputError(
                f"mpc_task must be 'joint' or 'end_effector', got {self.mpc_task!r}"
            )
        pw = self.mpc_posture_weight
        if not (isinstance(pw, (int, float)) and math.isfinite(pw) and pw >= 0):
            raise InputError(f'mpc_posture_weight must be a finite number >= 0, got {pw!r}')
        w = _floats('mpc_weights', self.mpc_weights)
        if len(w) != 5 or not all(math.isfinite(x) and x >= 0 for x in w):
            raise InputError(
                'mpc_weights: expected 5 finite values >= 0 (task position, task velocity, '
                f'acceleration, base attitude, base angular velocity), got {self.mpc_weights!r}'
            )
        fc = self.friction_compensation
        if not (isinstance(fc, (int, float)) and not isinstance(fc, bool) and 0.0 <= fc <= 1.0):
            raise InputError(f'friction_compensation must be a number in [0, 1], got {fc!r}')
        names = list(self.command_joints)
        if len(set(names)) != len(names):
            raise InputError(f'command_joints lists a joint twice: {names}')
        if names:  # lengths that need no model
            self.per_joint(names)
        from .effort_laws import FreeFlying
        from .impedance import cartesian_gains, nullspace_gains

        FreeFlying.check_base_gains(self.base_gains)
        dump = _floats('momentum_dump', self.momentum_dump)
        if len(dump) != 3 or not (0 <= dump[1] < dump[0] <= 1 and math.isfinite(dump[2])):
            raise InputError(
                'momentum_dump: expected [start, stop, gain] with 0 <= stop < start <= 1 '
                "(fractions of the wheels' speed limit) and a finite gain [1/s], got "
                f'{self.momentum_dump!r}'
            )
        if self.actuators_file and self.mode in ('free_flying',) + _space_modes():
            from ..core.actuators import load_actuators

            load_actuators(self.actuators_file)  # InputError naming the file's problem
        cartesian_gains(self.cartesian_stiffness, self.cartesian_damping)
        nullspace_gains(self.nullspace_stiffness, self.nullspace_damping)
        if self.capture_base not in ('', 'held', 'free'):
            raise InputError(
                f"capture_base: expected '', 'held' or 'free', got {self.capture_base!r}"
            )
        if isinstance(self.target_file, str) and not self.target_file:
            return self
        if not self.floating:
            raise InputError(
                'target_file: the capture of a free-flying target needs a floating base (base: '
                'floating)'
            )
        from ..core.target import load_target

        load_target(self.target_file)  # InputError naming the file's problem
        return self

    def per_joint(self, names):
        """
        Return {setting: (len(names),) array}, the per-joint settings of command joints ``names``.

        ``effort_limits`` only when given; InputError naming a bad one.
        """
        out = {
            name: per_joint(name, getattr(self, name), names, allow_inf=name == 'integral_limit')
            for name in GAINS + TOLERANCES
        }
        if len(self.effort_limits):
            out['effort_limits'] = per_joint(
                'effort_limits',
                self.effort_limits,
                names,
                allow_inf=True,
                minimum=np.nextafter(0.0, 1.0),
            )
        return out
