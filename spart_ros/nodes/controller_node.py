"""
spart_controller: model-based commands for a ros2_control effort controller, as a lifecycle node.

A thin rclpy adapter around :class:`spart_ros.control.controller.Controller` (states, reference
schedule, safety gate, laws: docs/controller.md): the robot's model and state come in through
:class:`~.robot_inputs.RobotInputs` (spart_dynamics' parameters, topics and QoS), references,
notices, commands and status through :class:`~.controller_io.ControllerIO`, parameters from the
table :data:`PARAMETERS` (:mod:`.controller_parameters`).  Lifecycle: configure (parameters,
topics, model), activate (hold the pose measured at the next fresh state), deactivate (ONE
all-zero command, then silence), cleanup, shutdown (and SIGINT/SIGTERM: one all-zero command
before the context goes); ``autostart`` configures and activates at start; ``~/enable``
(std_srvs/SetBool) is the shortcut: true = configure if needed and activate, or clear a fault;
false = deactivate.  Ticks: one per new joint_states stamp (``rate`` 0) or on a timer, with a
steady-clock watchdog between them.  No callback, timer or service ever raises.

Trajectories come on the ``~/joint_trajectory`` topic and, when control_msgs is installed, through
the ``~/follow_joint_trajectory`` action (:mod:`.trajectory_action`: JointTrajectoryController's
action, for MoveIt); without control_msgs the node says so at start.
"""

import sys
import time
import traceback

from rclpy.clock import Clock, ClockType
from rclpy.lifecycle import LifecycleNode, TransitionCallbackReturn
from std_srvs.srv import SetBool

from .config import ConfigError, package_path
from .controller_io import ControllerIO
from .controller_parameters import PARAMETERS, RENAMED, setting, settings_from
from .parameters import declare, values, watch
from .robot_inputs import guarded, INPUT_PARAMETERS, RobotInputs
from .runner import run_node
from .throttle import LogLimiter
from ..control.controller import ControlInputs, Controller, FAULT, INACTIVE, UNCONFIGURED
from ..control.modes import accepts_pose_goals, mode_class
from ..control.settings import RUN_TIME
from ..core.errors import SpartError

NODE_NAME = 'spart_controller'
SUCCESS, FAILURE = TransitionCallbackReturn.SUCCESS, TransitionCallbackReturn.FAILURE

__all__ = ['ControllerNode', 'PARAMETERS', 'main']


class ControllerNode(LifecycleNode):
    """The spart_controller node (see the module docstring)."""

    NODE_NAME = NODE_NAME

    def __init__(self, **kwargs):
        super().__init__(NODE_NAME, **kwargs)
        self.p = declare(
            self, PARAMETERS, structural_read_only=False, renamed=RENAMED
        )  # structural: unconfigured
        self.limiter = LogLimiter(5.0)
        self.controller = Controller(notify=self._notify)
        self.inputs = self.io = self._error = self._plant_gravity = None
        self._timers, self._tick_timer = [], None
        watch(
            self,
            PARAMETERS,
            self._apply,
            structural_ok=lambda: self.controller.state == UNCONFIGURED,
        )
        self.create_service(SetBool, '~/enable', self._on_enable)
        self.action = self._action_server()
        self.capture_io = None
        self.capture_action = None
        if self.p['target_file']:  # the ~/capture action (a structural parameter: set at start)
            from .capture_action import CaptureActionServer

            self.capture_action = CaptureActionServer(self)
            self.get_logger().info(f'Capture action server on {self.capture_action.name}')
        if not self.p['autostart']:
            self.get_logger().info(
                'unconfigured (autostart false): waiting for the configure transition'
            )
        elif self.trigger_configure() != SUCCESS:
            raise (
                self._error
                if isinstance(self._error, SpartError)
                else ConfigError(f'configure failed: {self._error}')
            )
        else:
            self.trigger_activate()

    def _action_server(self):
        """
        Return the FollowJointTrajectory action server.

        Or None (and a log line) without control_msgs.
        """
        try:
            from .trajectory_action import TrajectoryActionServer
        except ImportError as err:
            self.get_logger().info(
                f'control_msgs is not installed ({err}): no FollowJointTrajectory action server; '
                'trajectories on the ~/joint_trajectory topic only (install '
                'ros-<distro>-control-msgs for MoveIt and other JointTrajectoryController clients)'
            )
            return None
        server = TrajectoryActionServer(self)
        self.get_logger().info(f'FollowJointTrajectory action server on {server.name}')
        return server

    def _results(self):
        """Results of the action goals that finished (after a tick or a transition)."""
        if self.action is not None and self.action.busy:
            self.action.update()
        if self.capture_action is not None and self.capture_action.busy:
            self.capture_action.update()

    # -- lifecycle --------------------------------------------------------------------------
    def on_configure(self, state):
        try:
            self._configure()
            return SUCCESS
        except Exception as err:  # noqa: BLE001 - a failed transition, not a dead node
            self._error = err
            self.get_logger().error(
                f'configure failed: {err}'
                + ('' if isinstance(err, SpartError) else '\n' + traceback.format_exc())
            )
            self._teardown()
            return FAILURE

    def _configure(self):
        p = self.p = values(self, PARAMETERS)
        p['actuators_file'] = package_path('actuators_file', p['actuators_file'])
        p['target_file'] = package_path('target_file', p['target_file'])
        settings = settings_from(p)
        self.controller.configure(settings)
        self.event_driven = settings.event_driven
        self.inputs = RobotInputs(
            self,
            {k: p[k] for k in INPUT_PARAMETERS},
            model_options={'jacobians': False, 'actuators_file': p['actuators_file']},
            on_model=self._on_model,
            on_joint_state=self._on_joint_state,
            on_rejected=self._on_rejected,
        )
        self.io = ControllerIO(
            self,
            p,
            mode_class(settings.mode).reference_names(settings.mode),
            self.inputs.guard,
            pose_goals=accepts_pose_goals(settings.mode),
            inputs=self.inputs,
        )
        steady = Clock(
            clock_type=ClockType.STEADY_TIME
        )  # under use_sim_time the node clock stops with the sim
        self._timers = [
            self.create_timer(
                min(0.02, settings.state_timeout / 4),
                self._guarded(self._watchdog, 'watchdog'),
                clock=steady,
            )
        ]
        if p['rate'] > 0:
            self._tick_timer = self.create_timer(
                1.0 / p['rate'], self._guarded(self._tick, 'tick')
            )
            self._timers.append(self._tick_timer)
        if p['status_rate'] > 0:
            self._timers.append(
                self.create_timer(1.0 / p['status_rate'], self._guarded(self._status, 'status'))
            )
        if p['target_file']:
            from .capture_io import CaptureIO
            from .controller_io import COMMAND_QOS
            from .robot_inputs import ROBOT_DESCRIPTION_QOS

            self.capture_io = CaptureIO(
                self, p, COMMAND_QOS, ROBOT_DESCRIPTION_QOS, self.inputs.guard
            )
        self.inputs.load_initial_model()
        if self.controller.model_error:  # a model from the parameters that does not fit them
            raise ConfigError(self.controller.model_error)
        self.get_logger().info(
            f'mode {settings.mode}, base {p["base"]}, gravity {self.inputs.gravity.tolist()}, '
            f'commands on {self.io.topics[0]} '
            f'({"every joint_states" if self.event_driven else str(p["rate"]) + " Hz"}), '
            f'state_timeout {settings.state_timeout:g} s; inputs '
            f'{self.inputs.input_topics() + self.io.topics[1:]}'
            + ('' if self.inputs.model else '; waiting for a robot description')
        )

    def on_activate(self, state):
        try:
            self.controller.activate()
        except SpartError as err:
            self.get_logger().error(f'activate refused: {err}')
            self._error = err
            return FAILURE
        self.get_logger().info(
            'active: holding the pose measured at the next state until a trajectory comes'
        )
        return SUCCESS

    def on_deactivate(self, state):
        self._send(self.controller.deactivate())
        self._results()
        self.get_logger().info(
            'inactive: one zero command sent if one was applied; no commands until activated'
        )
        return SUCCESS

    def on_cleanup(self, state):
        self._teardown()
        return SUCCESS

    def on_shutdown(self, state):
        zero = self.controller.shutdown()
        self._send(zero)
        if self.io is not None and not self.io.flush():  # delivered before the publisher goes
            self.get_logger().warn(
                'the last (zero) command was not acknowledged by every subscriber within 2 s '
                '(a starved machine, or a subscriber gone): the drives may keep the last efforts'
            )
        self._teardown()
        self.get_logger().info(
            'finalized: '
            + ('one zero command sent' if zero is not None else 'no command was applied')
        )
        return SUCCESS

    def on_error(self, state):
        self._send(self.controller.deactivate('a transition failed'))
        self._teardown()
        return SUCCESS

    def on_exit(self):
        """
        SIGINT/SIGTERM (runner.run_node): the shutdown transition.

        With the context still valid.
        """
        if self._state_machine.current_state[1] in ('unconfigured', 'inactive', 'active'):
            self.trigger_shutdown()

    def _teardown(self):
        if self.controller.state == INACTIVE:
            self.controller.cleanup()
        self._results()
        for timer in self._timers:
            self.destroy_timer(timer)
        self._timers, self._tick_timer = [], None
        for part in (self.inputs, self.io, self.capture_io):
            if part is not None:
                part.destroy()
        self.inputs = self.io = self.capture_io = None

    # -- model, parameters, services --------------------------------------------------------
    def _on_model(self, model):
        was_active = self.controller.active
        self._send(self.controller.set_model(model.robot, model.fast, model.hardware))
        self.io.set_joints(self.controller.joint_names, model.robot.base_link.name)
        self.on_gravity(self._plant_gravity)
        if (
            was_active
            and not self.controller.active
            and self._state_machine.current_state[1] == 'active'
        ):
            self.trigger_deactivate()  # the lifecycle follows: activate again to command
        elif self.controller.active:
            self._tick()

    def on_gravity(self, g):
        """Take the plant's gravity (latched topic): warned when the model's differs."""
        self._plant_gravity = g
        if (
            g is not None
            and self.inputs is not None
            and float(abs(g - self.inputs.gravity).max()) > 1e-9
        ):
            self.get_logger().warning(
                f'the plant simulates gravity {g.tolist()} but this controller models '
                f'{self.inputs.gravity.tolist()} (parameter gravity): the model-based efforts '
                'will be off by the difference'
            )

    def _apply(self, changes):
        """Run-time parameters (validated by the table) to the controller, between two ticks."""
        changes = {k: setting(k, v) for k, v in changes.items() if k in RUN_TIME}
        if changes and self.controller.settings is not None:
            self.controller.apply_settings(**changes)
            self.get_logger().info(f'parameters applied: {changes}')

    def _on_enable(self, req, res):
        try:
            if req.data and self.controller.state == FAULT:
                self.controller.clear_fault()
            elif req.data:
                for transition, from_state in (
                    (self.trigger_configure, 'unconfigured'),
                    (self.trigger_activate, 'inactive'),
                ):
                    if (
                        self._state_machine.current_state[1] == from_state
                        and transition() != SUCCESS
                    ):
                        raise ConfigError(str(self._error))
            elif self._state_machine.current_state[1] == 'active':
                self.trigger_deactivate()
            c = self.controller
            res.success = c.active == bool(req.data)
            res.message = c.state + (f': {c.reason}' if c.reason else '')
        except Exception as err:  # noqa: BLE001 - a service must never kill the node
            res.success, res.message = False, str(err)
        self.get_logger().info(f'~/enable {req.data}: {res.message}')
        return res

    # -- ticks ------------------------------------------------------------------------------
    def _inputs(self):
        ri = self.inputs
        state = ri.state()
        return ControlInputs(
            state,
            None if state is not None else ri.unavailable(),
            ri.joints.received,
            ri.odom_steady if ri.floating else None,
            ri.last_stamp if self.event_driven else None,
            time.monotonic(),
        )

    def control_stamp(self):
        """(sec, nanosec): the newest joint_states stamp (event-driven), or the node clock."""
        stamp = self.inputs.last_stamp if self.inputs is not None else None
        if stamp is not None and self.event_driven:
            return stamp
        return divmod(self.get_clock().now().nanoseconds, 1_000_000_000)

    def control_time(self):
        sec, nanosec = self.control_stamp()
        return sec + 1e-9 * nanosec

    def _tick(self):
        stamp = self.control_stamp()
        self._send(self.controller.update(self._inputs(), stamp[0] + 1e-9 * stamp[1]), stamp)
        if self.capture_io is not None:
            self.capture_io.after_tick()
        self._results()

    def _on_joint_state(self, sec, nanosec):
        if self._tick_timer is None:
            self._tick()

    def _watchdog(self):
        if self.inputs is not None:
            self._send(self.controller.check(self._inputs()))
        self._results()

    def _on_rejected(self, what, error):
        if what in ('joint_states', 'odometry', 'imu'):
            self._send(self.controller.reject(what, error))

    def _send(self, cmd, stamp=None):
        if cmd is not None and self.io is not None:
            # a command published before the plant's subscription matched is lost: a lockstep
            # plant then republishes the state it waits on, which must get an answer
            if self.event_driven and not self.io.has_readers():
                self.controller.undelivered()
            self.io.publish(cmd, stamp)

    def _status(self):
        c = self.controller
        self.io.publish_status(
            c.settings.mode,
            c.snapshot(self.control_time()),
            c.state_age(self._inputs()),
            self.inputs.counts['rejected'],
        )
        if self.action is not None:
            self.action.publish_feedback()
        if self.capture_action is not None:
            self.capture_action.publish_feedback(self.p['world_frame'])

    # -- logging ----------------------------------------------------------------------------
    def _notify(self, level, key, text):
        log = (
            self.get_logger()
        )  # one call site per severity: rclpy refuses a severity change at one
        if level == 'error':
            log.error(text)
        elif not self.limiter.allow(key, time.monotonic()):
            return
        elif level == 'warning':
            log.warning(text)
        else:
            log.info(text)

    def _guarded(self, callback, what):
        run = guarded(self, self.limiter, callback, what)
        return lambda: run()


def main(args=None):
    """
    Entry point: run the node until SIGINT/SIGTERM.

    Returns the exit code (2: bad parameters).
    """
    return run_node(ControllerNode, args=args)


if __name__ == '__main__':
    sys.exit(main())
