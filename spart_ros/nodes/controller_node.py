"""spart_controller: model-based commands for a ros2_control effort controller, as a lifecycle node.

A thin rclpy adapter around :class:`spart_ros.control.controller.Controller` (the states, the
reference schedule, the safety gate and the laws: docs/controller.md).  This node carries the
robot's model and state in (:class:`~.robot_inputs.RobotInputs`: the same parameters, topics
and QoS as spart_dynamics), the references and notices in and the commands and status out
(:class:`~.controller_io.ControllerIO`), and maps the lifecycle onto the controller:

- configure: parameters (:data:`PARAMETERS`, :mod:`.controller_parameters`), subscriptions,
  publishers, the model from the parameters or the ``robot_description`` topic;
- activate: hold the pose measured at the next fresh state, then command; deactivate: ONE
  all-zero command, then silence; cleanup; shutdown (and SIGINT/SIGTERM): one all-zero command
  before the context goes;
- ``autostart`` (default true) configures and activates at start, as a launch file would; the
  standard ``~/change_state`` / ``~/get_state`` services (``ros2 lifecycle set``) drive it;
  ``~/enable`` (std_srvs/SetBool) is the shortcut: true = configure if needed and activate (or
  clear a fault), false = deactivate.

Ticks: one per new joint_states stamp (``rate`` 0), or on a timer; a steady-clock watchdog in
between.  No callback, timer or service ever raises: the node never exits on bad input.
"""
import sys
import time
import traceback

from rclpy.clock import Clock, ClockType
from rclpy.lifecycle import LifecycleNode, TransitionCallbackReturn
from std_srvs.srv import SetBool

from ..control.controller import FAULT, INACTIVE, UNCONFIGURED, ControlInputs, Controller
from ..control.modes import MODES
from ..control.settings import RUN_TIME
from ..core.errors import SpartError
from .config import ConfigError
from .controller_io import ControllerIO
from .controller_parameters import PARAMETERS, settings_from
from .parameters import declare, values, watch
from .robot_inputs import INPUT_PARAMETERS, RobotInputs, guarded
from .runner import run_node
from .throttle import LogLimiter

NODE_NAME = 'spart_controller'
SUCCESS, FAILURE = TransitionCallbackReturn.SUCCESS, TransitionCallbackReturn.FAILURE

__all__ = ['ControllerNode', 'PARAMETERS', 'main']


class ControllerNode(LifecycleNode):
    """The spart_controller node (see the module docstring)."""

    NODE_NAME = NODE_NAME

    def __init__(self, **kwargs):
        super().__init__(NODE_NAME, **kwargs)
        self.p = declare(self, PARAMETERS)
        self.limiter = LogLimiter(5.0)
        self.controller = Controller(notify=self._notify)
        self.inputs = self.io = None
        self._timers = []
        self._tick_timer = None
        self._plant_gravity = None
        self._error = None
        watch(self, PARAMETERS, self._apply, structural_ok=lambda: self.controller.state == UNCONFIGURED)
        self.create_service(SetBool, '~/enable', self._on_enable)
        if not self.p['autostart']:
            self.get_logger().info('unconfigured (autostart false): waiting for the configure transition')
        elif self.trigger_configure() != SUCCESS:
            raise self._error if isinstance(self._error, SpartError) else ConfigError(f'configure failed: {self._error}')
        else:
            self.trigger_activate()

    # -- lifecycle --------------------------------------------------------------------------
    def on_configure(self, state):
        try:
            self._configure()
            return SUCCESS
        except Exception as err:  # noqa: BLE001 - a failed transition, not a dead node
            self._error = err
            self.get_logger().error(f'configure failed: {err}' + (
                '' if isinstance(err, SpartError) else '\n' + traceback.format_exc()))
            self._teardown()
            if self.controller.state != UNCONFIGURED:
                self.controller.cleanup()
            return FAILURE

    def _configure(self):
        p = self.p = values(self, PARAMETERS)
        settings = settings_from(p)
        self.controller.configure(settings)
        law = MODES[settings.mode]
        self.event_driven = settings.event_driven
        self.inputs = RobotInputs(self, {k: p[k] for k in INPUT_PARAMETERS}, model_options=dict(jacobians=False),
                                  on_model=self._on_model, on_joint_state=self._on_joint_state,
                                  on_rejected=self._on_rejected)
        self.io = ControllerIO(self, p, law.reference_names(settings.mode), self.inputs.guard)
        steady = Clock(clock_type=ClockType.STEADY_TIME)     # under use_sim_time the node clock stops with the sim
        self._timers = [self.create_timer(min(0.02, settings.state_timeout / 4), self._guarded(self._watchdog,
                                                                                               'watchdog'), clock=steady)]
        if p['rate'] > 0:
            self._tick_timer = self.create_timer(1.0 / p['rate'], self._guarded(self._tick, 'tick'))
            self._timers.append(self._tick_timer)
        if p['status_rate'] > 0:
            self._timers.append(self.create_timer(1.0 / p['status_rate'], self._guarded(self._status, 'status')))
        self.inputs.load_initial_model()
        if self.controller.model_error:        # a model from the parameters that does not fit them
            raise ConfigError(self.controller.model_error)
        self.get_logger().info(
            f'mode {settings.mode}, base {p["base"]}, gravity {self.inputs.gravity.tolist()}, commands on '
            f'{self.io.topics[0]} ({"every joint_states" if self.event_driven else str(p["rate"]) + " Hz"}), '
            f'state_timeout {settings.state_timeout:g} s; inputs {self.inputs.input_topics() + self.io.topics[1:]}'
            + ('' if self.inputs.model else '; waiting for a robot description'))

    def on_activate(self, state):
        try:
            self.controller.activate()
        except SpartError as err:
            self.get_logger().error(f'activate refused: {err}')
            self._error = err
            return FAILURE
        self.get_logger().info('active: holding the measured pose until a trajectory comes')
        if self.inputs.last_stamp is not None:
            self._tick()                # answer the newest state at once if it is fresh
        return SUCCESS

    def on_deactivate(self, state):
        self._send(self.controller.deactivate())
        self.get_logger().info('inactive: one zero command sent if one was applied; no commands until activated')
        return SUCCESS

    def on_cleanup(self, state):
        self.controller.cleanup()
        self._teardown()
        return SUCCESS

    def on_shutdown(self, state):
        self._send(self.controller.shutdown())
        self._teardown()
        return SUCCESS

    def on_error(self, state):
        self._send(self.controller.deactivate('a transition failed'))
        if self.controller.state == INACTIVE:
            self.controller.cleanup()
        self._teardown()
        return SUCCESS

    def on_exit(self):
        """SIGINT/SIGTERM (runner.run_node): the shutdown transition, with the context still valid."""
        if self._lifecycle_state() not in ('finalized', 'unknown'):
            self.trigger_shutdown()

    def _teardown(self):
        for timer in self._timers:
            self.destroy_timer(timer)
        self._timers, self._tick_timer = [], None
        for part in (self.inputs, self.io):
            if part is not None:
                part.destroy()
        self.inputs = self.io = None

    def _lifecycle_state(self):
        return self._state_machine.current_state[1]

    # -- model, parameters ------------------------------------------------------------------
    def _on_model(self, model):
        was_active = self.controller.active
        self._send(self.controller.set_model(model.robot, model.fast))
        self.io.set_joints(self.controller.joint_names, model.robot.base_link.name)
        self._check_gravity()
        if was_active and not self.controller.active and self._lifecycle_state() == 'active':
            self.trigger_deactivate()           # the lifecycle follows: activate again to command
        elif self.controller.active:
            self._tick()

    def on_gravity(self, g):
        self._plant_gravity = g
        self._check_gravity()

    def _check_gravity(self):
        g = self._plant_gravity
        if g is not None and self.inputs is not None and float(abs(g - self.inputs.gravity).max()) > 1e-9:
            self.get_logger().warning(
                f'the plant simulates gravity {g.tolist()} but this controller models {self.inputs.gravity.tolist()} '
                '(parameter gravity): the model-based efforts will be off by the difference')

    def _apply(self, changes):
        """Run-time parameters (validated by the table) to the controller, between two ticks."""
        changes = {k: v for k, v in changes.items() if k in RUN_TIME}
        if changes and self.controller.settings is not None:
            self.controller.apply_settings(**{k: (tuple(v) if isinstance(v, list) and k in (
                'effort_limits', 'base_gains') else v) for k, v in changes.items()})
            self.get_logger().info(f'parameters applied: {changes}')

    # -- ticks ------------------------------------------------------------------------------
    def _inputs(self):
        ri = self.inputs
        state = ri.state()
        return ControlInputs(state, None if state is not None else ri.unavailable(), ri.joints.received,
                             ri.odom_steady if ri.floating else None,
                             ri.last_stamp if self.event_driven else None, time.monotonic())

    def _control_stamp(self):
        """(sec, nanosec): the newest joint_states stamp (event-driven), or the node clock."""
        stamp = self.inputs.last_stamp
        if self.event_driven and stamp is not None:
            return stamp
        return divmod(self.get_clock().now().nanoseconds, 1_000_000_000)

    def _tick(self):
        stamp = self._control_stamp()
        self._send(self.controller.update(self._inputs(), stamp[0] + 1e-9 * stamp[1]), stamp)

    def _on_joint_state(self, sec, nanosec):
        if self._tick_timer is None:
            self._tick()

    def _watchdog(self):
        if self.inputs is not None:
            self._send(self.controller.check(self._inputs()))

    def _on_rejected(self, what, error):
        if what in ('joint_states', 'odometry', 'imu'):
            self._send(self.controller.reject(what, error))

    def _send(self, cmd, stamp=None):
        if cmd is not None and self.io is not None:
            self.io.publish(cmd, stamp)

    def _status(self):
        c = self.controller
        stamp = self._control_stamp()
        self.io.publish_status(c.settings.mode, c.snapshot(stamp[0] + 1e-9 * stamp[1]), c.state_age(self._inputs()),
                               self.inputs.counts['rejected'])

    # -- references, notices ----------------------------------------------------------------
    def on_goal(self, goal):
        stamp = self._control_stamp()
        self.controller.submit(goal, stamp[0] + 1e-9 * stamp[1])

    def on_reference(self, name, value, received):
        self.controller.set_reference(name, value, received)

    def on_reset(self, why):
        self.controller.plant_reset(why)

    def _on_enable(self, req, res):
        try:
            state = self._lifecycle_state()
            if req.data and self.controller.state == FAULT:
                self.controller.clear_fault()
            elif req.data:
                if state == 'unconfigured' and self.trigger_configure() != SUCCESS:
                    raise ConfigError(f'configure failed: {self._error}')
                if self._lifecycle_state() == 'inactive' and self.trigger_activate() != SUCCESS:
                    raise ConfigError(f'{self._error}')
            elif state == 'active':
                self.trigger_deactivate()
            res.success = self.controller.active == bool(req.data)
            res.message = (f'{self.controller.state}' + (f': {self.controller.reason}' if self.controller.reason else '')
                           if res.success else f'not {"enabled" if req.data else "disabled"}: {self.controller.reason}')
        except Exception as err:  # noqa: BLE001 - a service must never kill the node
            res.success, res.message = False, str(err)
        self.get_logger().info(f'~/enable {req.data}: {res.message}')
        return res

    # -- logging ----------------------------------------------------------------------------
    def _notify(self, level, key, text):
        # one call site per severity: rclpy refuses a severity change at a call site
        log = self.get_logger()
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
    """Entry point: run the node until SIGINT/SIGTERM; returns the exit code (2: bad parameters)."""
    return run_node(ControllerNode, args=args)


if __name__ == '__main__':
    sys.exit(main())
