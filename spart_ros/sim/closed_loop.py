"""
Closed loop without ROS: the controller of ``spart_controller`` on a plant, in one function call.

:func:`simulate` runs the pure :class:`~spart_ros.control.controller.Controller` exactly as the
node runs it (configured with a :class:`~spart_ros.control.settings.ControllerSettings`,
activated, one :meth:`~spart_ros.control.controller.Controller.update` per joint state with its
stamp, its commands applied to the plant as an effort controller applies them) on

- the embedded MuJoCo plant (``plant='mujoco'``, :class:`~spart_ros.sim.plant.MujocoPlant`: what
  ``spart_sim`` runs), or
- the core's own forward dynamics integrated by RK4 (``plant='rk4'``,
  :class:`~spart_ros.sim.rigid_body.RigidBodyPlant`: Modern Robotics' ``SimulateControl``),
- or a plant object of either kind built by the caller (e.g. to apply an external wrench
  through MuJoCo's ``xfrc_applied``),

and returns the time series (:class:`ClosedLoopRun`: states, references, commands, base
pose; the demo's PNG plots on request).  It is what a notebook, a parameter sweep or a unit
test about a control law uses: no processes, no middleware, no real time, deterministic
(the same inputs give the same run bit for bit).  ``python -m spart_ros.simulate`` is its
command line.

Timing, as a lockstep ``spart_sim``: at each tick k (every ``steps_per_tick`` physics steps of
``dt``) the plant's state at t_k is read (joint positions and velocities, the base link's
odometry), the controller answers it with the stamp t_k, the command is held for the next
``steps_per_tick`` steps.  The controller's steady clock is the simulated time, so its
timeouts never fire unless the caller makes them (``events``).  A fixed base is the same base
object every tick (the controller checks it once, as the node's fixed-base parameters).
"""

from collections import namedtuple
from dataclasses import dataclass, field
import os
import time
import warnings

import numpy as np

from .commands import EffortCommand
from .joint_limits import JointLimitWarning, outside_position_limits, VelocityLimits
from .plant import InitialState, MujocoPlant
from .rigid_body import RigidBodyPlant
from ..control.controller import ControlInputs, Controller
from ..control.goals import TrajectoryGoal
from ..control.settings import ControllerSettings
from ..core.errors import InputError
from ..core.fast.mimic import fast_dynamics

__all__ = ['simulate', 'ClosedLoopRun', 'DEMOS', 'demo', 'PLANTS']

PLANTS = ('mujoco', 'rk4')

#: the closed-loop demo's two scenarios (scripts/sim_demo.py runs them over ROS; ``demo()`` here):
#: waypoints are offsets from the start position [rad] at times after the trajectory's start [s]
DEMOS = {
    'SC_3DoF': {
        'label': 'SC_3DoF: 3-joint arm on a free-floating spacecraft, zero gravity, mode '
        'floating_base',
        'namespace': 'demo_sc3dof',
        'floating': True,
        'rms_bound': 0.01,
        'waypoints': [(1.5, [0.6, -0.4, 0.5]), (3.0, [-0.3, 0.5, -0.6]), (4.5, [0.0, 0.0, 0.0])],
    },
    'kuka_iiwa': {
        'label': 'kuka_iiwa: 7-joint arm on a fixed base in gravity, mode computed_torque',
        'namespace': 'demo_kuka',
        'floating': False,
        'rms_bound': 0.001,
        'waypoints': [
            (1.5, [0.4, 0.3, -0.3, -0.4, 0.3, 0.4, -0.3]),
            (3.0, [-0.3, -0.2, 0.4, 0.3, -0.4, -0.3, 0.4]),
            (4.5, [0.0] * 7),
        ],
    },
}

#: the orbital scenario (a second main job): SC_3DoF in a circular low Earth orbit, its base's
#: reaction wheels and thrusters (urdf/SC_3DoF.actuators.yaml) under free_flying: station keeping
#: at the LVLH target point it starts at (with an approach's 1 cm/s radial, 2 cm/s along-track
#: velocity not yet stopped) while the arm moves and the wheels hold the attitude; its bounds: the
#: base within ``station_keeping_bound`` [m] of the target all along and within ``settled_bound``
#: after ``settled_after`` s, the base attitude within ``attitude_bound_deg`` of its start
DEMOS['SC_3DoF_orbit'] = {
    'label': 'SC_3DoF_orbit: the 3-joint arm on a spacecraft in a 500 km circular orbit, mode '
    'free_flying: station keeping in LVLH with 12 thrusters, attitude held by 4 reaction wheels',
    'robot': 'SC_3DoF',
    'namespace': 'demo_orbit',
    'floating': True,
    'rms_bound': 0.01,
    'waypoints': [
        (5.0, [0.3, -0.21, 0.24]),
        (10.0, [-0.15, 0.24, -0.3]),
        (15.0, [0.0, 0.0, 0.0]),
    ],
    'orbit': {'altitude': 500e3},
    'actuators': 'urdf/SC_3DoF.actuators.yaml',
    'initial_velocity': (0.01, 0.02, 0.0),
    'station_keeping_bound': 0.06,
    'settled_after': 10.0,
    'settled_bound': 0.03,
    'attitude_bound_deg': 0.5,
}

Event = namedtuple('Event', 't action')
Event.__doc__ = """``action(controller, plant, t)`` is called once, before the tick at the first
control time >= ``t`` [s] (submit a goal, set a reference, reset the plant, push the robot...)."""


class _Base:
    """
    The base link's state as the controller takes it.

    R_b, p_b: pose of b in the world; v_b, w_b: its twist in b.
    """

    __slots__ = ('R_b', 'p_b', 'v_b', 'w_b')

    def __init__(self, R_b, p_b, v_b, w_b):
        self.R_b, self.p_b, self.v_b, self.w_b = R_b, p_b, v_b, w_b


class _State:
    __slots__ = ('base', 'q', 'qd')

    def __init__(self, base, q, qd):
        self.base, self.q, self.qd = base, q, qd


@dataclass
class ClosedLoopRun:
    """
    A closed-loop run's time series, one row per control tick (before its command acts).

    ``t`` (k,) control time [s]; ``q``, ``qd`` (k, n) measured, ``q_ref``, ``qd_ref`` (k, n) the
    joint reference the controller followed at that tick (NaN in modes without one), joints in
    ``joint_names`` order (the robot's independent coordinates); ``commands`` (k, m) what was
    sent, in ``command_joints`` order (NaN where nothing was); ``base_position`` (k, 3),
    ``base_rotation`` (k, 3, 3) of the base link in the world, ``base_twist`` (k, 6) [v_b; w_b]
    in b; ``states`` (k,) the controller's state; ``controller`` and ``plant`` as they ended;
    ``cpu_seconds``, ``wall_seconds`` of the loop; ``goals`` the goals submitted.  With base
    actuators (else None): ``wheel_speeds``, ``wheel_torques`` (k, n_w), ``thruster_commands``
    (k, n_t), ``propellant`` (k,) used so far [kg], ``actuation_feasible`` (k,) whether the
    allocation met the wrench.  ``capture``: with a target (``simulate(target=...)``), the
    :class:`~spart_ros.sim.capture_loop.CaptureRecord`, else None.
    """

    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    q_ref: np.ndarray
    qd_ref: np.ndarray
    commands: np.ndarray
    base_position: np.ndarray
    base_rotation: np.ndarray
    base_twist: np.ndarray
    states: list
    joint_names: list
    command_joints: list
    controller: object = None
    plant: object = None
    cpu_seconds: float = 0.0
    wall_seconds: float = 0.0
    goals: list = field(default_factory=list)
    #: with base actuators (else None): (k, n_w) wheel speeds [rad/s] measured and motor torques
    #: commanded [N m]; (k, n_t) thruster commands [N]; (k,) propellant the plant used [kg]; (k,)
    #: whether the base actuators' allocation was feasible
    wheel_speeds: np.ndarray = None
    wheel_torques: np.ndarray = None
    thruster_commands: np.ndarray = None
    propellant: np.ndarray = None
    actuation_feasible: np.ndarray = None
    #: with a target (``simulate(target=...)``): the capture's
    #: :class:`~spart_ros.sim.capture_loop.CaptureRecord`, else None
    capture: object = None

    @property
    def distance_to_target(self):
        """Return the end effector's distance to the target's fixture (k,) [m], or None."""
        return None if self.capture is None else self.capture.distance

    @property
    def robot(self):
        return self.plant.robot

    @property
    def duration(self):
        return float(self.t[-1] - self.t[0]) if len(self.t) > 1 else 0.0

    def tracking_error(self):
        """Return q_ref - q (k, n) [rad or m] (NaN where there was no joint reference)."""
        return self.q_ref - self.q

    def rms(self, start=-np.inf, end=np.inf):
        """
        Return the RMS tracking error per joint (n,) over the ticks with start <= t <= end.

        NaN where there was no joint reference (a mode that follows none, or end-effector
        references).
        """
        e = self.tracking_error()[(self.t >= start) & (self.t <= end)]
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', RuntimeWarning)  # all NaN: no reference, NaN
            return np.sqrt(np.nanmean(e * e, axis=0))

    def cpu_per_simulated_second(self):
        """Return the loop's CPU seconds per simulated second."""
        return self.cpu_seconds / max(self.duration, 1e-12)

    def ee_poses(self, link, point=(0.0, 0.0, 0.0)):
        """
        Return (R (k, 3, 3), p (k, 3)).

        The frame of ``link`` (its URDF frame moved to ``point``, given in it) in the world at
        every tick.
        """
        from ..core.base_state import base_from_link_frame
        from ..core.inverse_kinematics import InverseKinematics

        ik = InverseKinematics(self.robot, link, point)
        R = np.empty((len(self.t), 3, 3))
        p = np.empty((len(self.t), 3))
        for k in range(len(self.t)):
            R0, r0, _ = base_from_link_frame(
                self.robot, self.base_rotation[k], self.base_position[k]
            )
            R[k], p[k] = ik.pose(self.q[k], R0, r0)
        return R, p

    def plots(self, output, name, start=0.0):
        """
        Return the demo's PNG plots into the folder ``output``.

        ``<name>_tracking.png`` (positions, reference, error), ``<name>_efforts.png``,
        ``<name>_base.png`` (base attitude, roll pitch yaw in deg), from control time ``start``
        [s] on; returns their paths.
        """
        from ..tools import plots

        os.makedirs(output, exist_ok=True)
        t = self.t - start
        paths = [
            os.path.join(output, f'{name}_{kind}.png') for kind in ('tracking', 'efforts', 'base')
        ]
        ref = ~np.isnan(self.q_ref[:, 0]) if len(self.q_ref) else np.zeros(0, dtype=bool)
        plots.joint_tracking(
            paths[0],
            f'{name}: joint tracking (offline, {self.plant.__class__.__name__})',
            self.joint_names,
            t,
            self.q,
            t[ref],
            self.q_ref[ref],
            t[ref],
            self.tracking_error()[ref],
        )
        plots.efforts(
            paths[1], f'{name}: commanded efforts', self.command_joints, t, self.commands
        )
        R0 = self.base_rotation[0]
        rpy = np.array([_rpy_deg(R0.T @ R) for R in self.base_rotation])
        plots.base_motion(paths[2], f'{name}: base attitude (change from the start)', t, rpy)
        return paths


def _rpy_deg(R):
    return np.degrees(
        [
            np.arctan2(R[2, 1], R[2, 2]),
            -np.arcsin(np.clip(R[2, 0], -1.0, 1.0)),
            np.arctan2(R[1, 0], R[0, 0]),
        ]
    )


def _settings(settings, floating):
    if settings is None:
        settings = {}
    if isinstance(settings, dict):
        unknown = sorted(set(settings) - set(ControllerSettings.__dataclass_fields__))
        if unknown:
            raise InputError(f'settings: unknown controller settings {unknown}')
        settings = ControllerSettings(**{'floating': floating, **settings})
    if not isinstance(settings, ControllerSettings):
        raise InputError(
            f'settings: expected a ControllerSettings or a dict of its fields, got {settings!r}'
        )
    if bool(settings.floating) != floating:
        raise InputError(
            f'settings.floating is {settings.floating} but the plant has a '
            f'{"floating" if floating else "fixed"} base'
        )
    return settings


def _plant(
    plant,
    urdf,
    base,
    gravity,
    dt,
    initial,
    joint_dynamics,
    armature,
    integrator,
    orbit=None,
    actuators=None,
    friction='model',
    target=None,
    grasp_link=None,
):
    if not isinstance(plant, str):
        return plant
    if plant not in PLANTS:
        raise InputError(f'plant: expected one of {PLANTS} or a plant object, got {plant!r}')
    if urdf is None:
        raise InputError('urdf: a URDF (path or text) is needed to build the plant')
    if plant == 'mujoco':
        return MujocoPlant.from_urdf(
            urdf,
            base=base,
            gravity=gravity,
            dt=dt,
            integrator=integrator,
            initial=initial,
            joint_dynamics=joint_dynamics,
            armature=armature,
            friction=friction,
            orbit=orbit,
            actuators=actuators,
            target=target,
            grasp_link=grasp_link,
        )
    import warnings

    from ..core.actuators import add_wheels, load_actuators
    from ..core.urdf import robot_from_urdf

    actuators = load_actuators(actuators)
    text = add_wheels(urdf, actuators) if actuators is not None else urdf
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        robot, _ = robot_from_urdf(text, joint_dynamics=joint_dynamics, armature=armature)
    out = RigidBodyPlant(
        robot,
        base=base,
        gravity=gravity,
        dt=dt,
        initial=initial,
        orbit=orbit,
        actuators=actuators,
        target=target,
        grasp_link=grasp_link,
    )
    out.description = text
    return out


def _controller_robot(plant, joint_dynamics, armature):
    """
    Return the controller's model of the plant's robot.

    The plant's own, or with base actuators its arm model: the wheels locked into the base.
    """
    if getattr(plant, 'actuation', None) is None or not plant.actuation.n_wheels:
        return plant.robot
    import warnings

    from ..core.actuators import lock_wheels
    from ..core.urdf import robot_from_urdf

    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        robot, _ = robot_from_urdf(
            lock_wheels(plant.description, plant.actuation.actuators),
            joint_dynamics=joint_dynamics,
            armature=armature,
        )
    return robot


def simulate(
    urdf=None,
    settings=None,
    *,
    duration,
    trajectory=None,
    trajectory_start=0.0,
    events=(),
    plant='mujoco',
    base='fixed',
    gravity=(0.0, 0.0, -9.81),
    dt=1e-3,
    steps_per_tick=1,
    initial=None,
    joint_dynamics=None,
    armature=None,
    integrator='RK4',
    record=True,
    friction='model',
    orbit=None,
    actuators=None,
    target=None,
    capture=None,
    grasp_link=None,
):
    """
    Run the controller on a plant for ``duration`` seconds; returns a :class:`ClosedLoopRun`.

    ``urdf``: path or text of the robot (not needed when ``plant`` is a plant object);
    ``settings``: a :class:`~spart_ros.control.settings.ControllerSettings` or a dict of its fields
    (``floating`` follows ``base``); ``trajectory``: a
    :class:`~spart_ros.control.goals.TrajectoryGoal`, or waypoints ``[(time_from_start, positions
    (n,))]`` of every independent joint (``robot.coordinates.names``), submitted at control time
    ``trajectory_start`` [s] (it starts then, or at the first command); ``events``: ``[(t,
    action(controller, plant, t))]`` (see :data:`Event`); ``plant``: 'mujoco', 'rk4' or a plant
    object (then ``base``, ``gravity``, ``dt``, ``initial`` are the plant's own); ``base``:
    'fixed' or 'floating'; ``gravity`` (3,) world [m/s^2]; ``dt``: physics step [s];
    ``steps_per_tick``: physics steps per control tick; ``initial``:
    :class:`~spart_ros.sim.plant.InitialState` (or ``{joint: position}``); ``joint_dynamics``,
    ``armature``: the robot's joint dynamics overrides
    (:func:`~spart_ros.core.urdf.robot_from_urdf`), for the plant and the controller's model
    alike; ``integrator``: MuJoCo's ('RK4', 'Euler', 'implicit', 'implicitfast');
    ``friction``: the MuJoCo plant's Coulomb friction, 'model' (default) or 'frictionloss'
    (:meth:`~spart_ros.sim.plant.MujocoPlant.from_urdf`);
    ``record``: False keeps only the last state (a benchmark of the loop itself); ``orbit``: a
    :class:`~spart_ros.core.orbit.CircularOrbit` (floating base, zero gravity): the plant moves
    near the orbit's reference point, every body under its tidal force and gravity-gradient torque,
    and the base pose, twist and ``initial`` are in the LVLH frame (:mod:`spart_ros.core.orbit`),
    which is the world frame the controller is given;
    ``actuators``: the base's reaction wheels and thrusters (their YAML file,
    :mod:`spart_ros.core.actuators`) for the plant built here, and the controller's
    ``actuators_file`` unless the settings name one: the controller's model then has the wheels
    locked, it is given the wheels' speeds each tick, and its thruster and wheel commands go to
    the plant (zeros on a stop command).
    ``target``: a free-flying target to capture (a :class:`~spart_ros.core.target.Target`, its
    YAML or URDF, or the YAML's content; ``grasp_link``: the plant's link that grasps it, default
    the controller's ``ee_link``), in the plant (built here with it, or a plant object built with
    ``target=``) and the controller's ``target_file``; ``capture``: the capture goal, submitted at
    its ``start`` (a :class:`~spart_ros.control.capture_goal.CaptureGoal`, or a mapping of its
    fields and of the loop's options ``start``, ``estimate_period``, ``estimate_noise``,
    ``estimate_delay``, ``seed``: :mod:`spart_ros.sim.capture_loop`; None: the default goal at
    t = 0; False: none).  The run's :attr:`ClosedLoopRun.capture` records it (its
    ``distance_to_target`` per tick).
    """
    if isinstance(initial, dict):
        initial = InitialState(dict(initial))
    if target is not None and grasp_link is None:
        link = settings.get('ee_link') if isinstance(settings, dict) else None
        link = getattr(settings, 'ee_link', None) if link is None else link
        grasp_link = link or None
    plant = _plant(
        plant,
        urdf,
        base,
        gravity,
        dt,
        initial,
        joint_dynamics,
        armature,
        integrator,
        orbit,
        actuators,
        friction,
        target,
        grasp_link,
    )
    floating = bool(plant.floating)
    settings = _with_target(settings, plant, target)
    if isinstance(settings, dict) and actuators is not None and isinstance(actuators, str):
        settings = {'actuators_file': actuators, **settings}
    settings = _settings(settings, floating)
    robot = _controller_robot(plant, joint_dynamics, armature)
    dynamics = fast_dynamics(robot, plant.gravity, joint_dynamics=settings.joint_dynamics)
    controller = Controller(notify=lambda level, key, text: None)
    controller.configure(settings, robot, dynamics)
    controller.activate()

    names = list(robot.coordinates.names)
    command = EffortCommand(controller.joint_names, plant.joint_names)
    actuation = getattr(plant, 'actuation', None)
    read = np.array([list(plant.joint_names).index(n) for n in names], dtype=np.intp)
    steps = int(steps_per_tick)
    if steps < 1:
        raise InputError(f'steps_per_tick: expected an integer >= 1, got {steps_per_tick!r}')
    tick_ns = steps * plant.dt_ns
    ticks = int(round(float(duration) * 1e9 / tick_ns)) + 1
    schedule = sorted((Event(float(t), action) for t, action in events), key=lambda e: e.t)
    goals = []
    if trajectory is not None:
        goal = (
            trajectory
            if isinstance(trajectory, TrajectoryGoal)
            else TrajectoryGoal.from_points(
                names, [(float(t), np.asarray(q, dtype=float), [], []) for t, q in trajectory]
            )
        )
        goals.append(goal)
        schedule.append(Event(float(trajectory_start), lambda c, p, t, g=goal: c.submit(g, t)))
        schedule.sort(key=lambda e: e.t)
    n, m = len(names), len(controller.joint_names)
    rows = ticks if record else 1
    out = {
        't': np.zeros(rows),
        'q': np.zeros((rows, n)),
        'qd': np.zeros((rows, n)),
        'q_ref': np.full((rows, n), np.nan),
        'qd_ref': np.full((rows, n), np.nan),
        'commands': np.full((rows, m), np.nan),
        'base_position': np.zeros((rows, 3)),
        'base_rotation': np.zeros((rows, 3, 3)),
        'base_twist': np.zeros((rows, 6)),
    }
    if actuation is not None:
        n_w, n_t = actuation.n_wheels, actuation.n_thrusters
        out.update(
            wheel_speeds=np.zeros((rows, n_w)),
            wheel_torques=np.zeros((rows, n_w)),
            thruster_commands=np.zeros((rows, n_t)),
            propellant=np.zeros(rows),
            actuation_feasible=np.zeros(rows, dtype=bool),
        )
    capture_loop = None
    if getattr(plant, 'target', None) is not None and controller.capture is not None:
        from .capture_loop import capture_options, CaptureLoop

        goal, loop_options = capture_options(capture)
        controller.capture.set_orbit(plant.orbit)
        capture_loop = CaptureLoop(controller, plant, goal, rows, **loop_options)
    states = []
    joint_times = np.zeros(n)
    fixed = None
    if not floating:
        R_b, p_b, _, _ = plant.base_link_state()
        fixed = _Base(R_b, p_b, np.zeros(3), np.zeros(3))
    start_ns = plant.time_ns
    for text in outside_position_limits(robot, names, plant.joint_positions()[read]):
        warnings.warn(text, JointLimitWarning, stacklevel=2)
    # the loop's bookkeeping, bound once (a tick is a few tens of microseconds)
    identity = np.array_equal(read, np.arange(len(plant.joint_names)))
    positions, velocities = plant.joint_positions, plant.joint_velocities
    base_link_state = plant.base_link_state
    update, step, hold = controller.update, plant.step, plant.hold_command
    reference = controller.reference  # the last commanded tick's reference (its feedback)
    rows_q_ref, rows_qd_ref, rows_cmd = out['q_ref'], out['qd_ref'], out['commands']
    # the readouts are new arrays each tick: kept in lists, stacked once after the loop (a list
    # append costs a fifth of a row assignment)
    kept_q, kept_qd, kept_p, kept_R, kept_v, kept_w = [], [], [], [], [], []
    if actuation is not None:
        wheel_index = actuation.wheel_index
        rows_speeds, rows_torques = out['wheel_speeds'], out['wheel_torques']
        rows_thrust, rows_used = out['thruster_commands'], out['propellant']
        rows_feasible = out['actuation_feasible']
    n_events, next_event = len(schedule), 0
    next_t = schedule[0].t if schedule else np.inf
    base_time = None
    last = ticks - 1
    cpu, wall = time.process_time(), time.perf_counter()
    for k in range(ticks):
        t_ns = start_ns + k * tick_ns
        t = t_ns * 1e-9
        if next_t <= t + 1e-12:
            while next_event < n_events and schedule[next_event].t <= t + 1e-12:
                schedule[next_event].action(controller, plant, t)
                next_event += 1
            next_t = schedule[next_event].t if next_event < n_events else np.inf
        if identity:  # the readouts are new arrays in this order already
            q, v = positions(), velocities()
            qd = v
        else:
            v = velocities()
            q, qd = positions()[read], v[read]
        if floating:
            base_state = _Base(*base_link_state())
            base_time = t
        else:
            base_state = fixed
        joint_times.fill(t)
        inputs = ControlInputs(
            _State(base_state, q, qd), None, joint_times, base_time, divmod(t_ns, 1_000_000_000), t
        )
        if actuation is not None:
            speeds = v[wheel_index]
            controlled = controller.controlled
            if (
                controller.active
                and controlled is not None
                and getattr(controlled.law, 'actuation', None) is not None
            ):
                controller.set_reference('wheel_speeds', speeds)
        if capture_loop is not None:
            capture_loop.before(t)
        cmd = update(inputs, t)
        row = k if record else 0
        if cmd is not None:
            hold(command, cmd.values)
            rows_cmd[row] = cmd.values
            if actuation is not None:
                _actuate(actuation, cmd)
        else:
            rows_cmd[row] = np.nan
        if capture_loop is not None:
            capture_loop.after(row, t)
        if record or k == last:  # (record=False: the last tick's)
            if actuation is not None:
                rows_speeds[row] = speeds
                rows_torques[row] = actuation.wheel_commands
                rows_thrust[row] = actuation.thruster_commands
                rows_used[row] = actuation.propellant
                status = controller.actuation
                rows_feasible[row] = status is not None and bool(status.feasible)
            kept_q.append(q)
            kept_qd.append(qd)
            ref = reference.last_ref  # controller.feedback()'s reference, without its errors
            if ref is not None and reference.last_t == t and reference.last_q is not None:
                law = controller.law
                if law is None or law.follows != 'none':
                    rows_q_ref[row], rows_qd_ref[row] = ref.position, ref.velocity
            kept_p.append(base_state.p_b)
            kept_R.append(base_state.R_b)
            kept_v.append(base_state.v_b)
            kept_w.append(base_state.w_b)
            states.append(controller.state)
        if k < ticks - 1:
            step(steps)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    if kept_q:
        ks = np.arange(ticks) if record else np.array([last])
        out['t'] = (start_ns + tick_ns * ks) * 1e-9  # each tick's t, as in the loop
        for key, kept in (('q', kept_q), ('qd', kept_qd), ('base_position', kept_p)):
            out[key][:] = kept
        out['base_rotation'][:] = kept_R
        out['base_twist'][:, 0:3], out['base_twist'][:, 3:6] = kept_v, kept_w
    if record:  # the plants enforce no URDF velocity limit: a joint past one is said
        for text in VelocityLimits.of(robot, names).excess(out['qd']):
            warnings.warn(text, JointLimitWarning, stacklevel=2)
    return ClosedLoopRun(
        joint_names=names,
        command_joints=list(controller.joint_names),
        controller=controller,
        plant=plant,
        cpu_seconds=cpu,
        wall_seconds=wall,
        states=states,
        goals=goals,
        capture=None if capture_loop is None else capture_loop.record,
        **out,
    )


def _with_target(settings, plant, target):
    """Return ``settings`` with the plant's target as the controller's ``target_file``."""
    body = getattr(plant, 'target', None)
    if body is None:
        if target is not None:
            raise InputError(
                'target: the plant given has no target: build it with target= (MujocoPlant.'
                'from_urdf, RigidBodyPlant), or let simulate build it'
            )
        return settings
    if isinstance(settings, ControllerSettings):
        return settings if settings.target_file else settings.replace(target_file=body.target)
    settings = dict(settings or {})
    settings.setdefault('target_file', body.target)
    return settings


def _actuate(actuation, cmd):
    """Send a command's thruster and wheel commands to the plant (zeros with a stop command)."""
    act = cmd.actuators
    if act is None:
        actuation.set_wheel_torques(np.zeros(actuation.n_wheels))
        actuation.set_thruster_commands(np.zeros(actuation.n_thrusters))
    else:
        actuation.set_wheel_torques(act.wheels)
        actuation.set_thruster_commands(act.thrusters)


def demo(name, plant='mujoco', duration=None, settings=None, **options):
    """
    Run the closed-loop demo's scenario ``name`` offline.

    ``name``: a key of :data:`DEMOS` (the robot, its ``config/demo_<name>.yaml`` controller
    settings, the trajectory of offsets from the start). The trajectory starts at t = 0 and the run
    lasts until 1 s after its end (``duration`` to change it). ``settings``: controller settings
    overriding the YAML's; ``plant``: 'mujoco' or 'rk4'; ``options``: more of :func:`simulate`'s.
    Returns a
    :class:`ClosedLoopRun`.
    """
    if name not in DEMOS:
        raise InputError(f'demo: expected one of {sorted(DEMOS)}, got {name!r}')
    scenario = DEMOS[name]
    share = _share()
    settings = dict(
        _yaml_settings(os.path.join(share, 'config', f'demo_{name}.yaml')), **(settings or {})
    )
    urdf = os.path.join(share, 'urdf', f'{scenario.get("robot", name)}.urdf')
    floating = scenario['floating']
    gravity = settings.pop('gravity', [0.0, 0.0, 0.0] if floating else [0.0, 0.0, -9.81])
    settings.pop('base', None)
    if settings.get('actuators_file', '').startswith('package://spart_ros/'):
        settings['actuators_file'] = os.path.join(
            share, settings['actuators_file'][len('package://spart_ros/') :]
        )
    if 'orbit' in scenario:
        from ..core.orbit import CircularOrbit

        options.setdefault('orbit', CircularOrbit.make(**scenario['orbit']))
    if 'actuators' in scenario:
        options.setdefault('actuators', os.path.join(share, scenario['actuators']))
    if 'initial_velocity' in scenario:
        options.setdefault(
            'initial', InitialState(base_linear_velocity=tuple(scenario['initial_velocity']))
        )
    n = len(scenario['waypoints'][0][1])
    q0 = np.zeros(n)
    waypoints = [(t, q0 + np.array(offset)) for t, offset in scenario['waypoints']]
    end = waypoints[-1][0] + 1.0 if duration is None else duration
    return simulate(
        urdf,
        settings,
        duration=end,
        trajectory=waypoints,
        plant=plant,
        base='floating' if floating else 'fixed',
        gravity=gravity,
        **options,
    )


def _share():
    """
    Return the folder holding config/ and urdf/.

    The source tree, or the installed share folder.
    """
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if os.path.isdir(os.path.join(here, 'config')) and os.path.isdir(os.path.join(here, 'urdf')):
        return here
    from ament_index_python.packages import get_package_share_directory

    return get_package_share_directory('spart_ros')


def _yaml_settings(path):
    """
    Return the ControllerSettings fields (and gravity, base) of a node parameters file.

    The file is keyed ``/**``.
    """
    import yaml

    with open(path, encoding='utf-8') as f:
        data = yaml.safe_load(f) or {}
    params = {}
    for key, node in data.items():
        if isinstance(node, dict) and 'ros__parameters' in node:
            params.update(node['ros__parameters'])
    fields = set(ControllerSettings.__dataclass_fields__) | {'gravity', 'base'}
    out = {
        k: (tuple(v) if isinstance(v, list) and k != 'gravity' else v)
        for k, v in params.items()
        if k in fields
    }
    return out
