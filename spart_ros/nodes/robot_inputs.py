"""
Robot model and state inputs shared by the spart_ros nodes (rclpy adapter).

:class:`RobotInputs` is composed by a node (``spart_dynamics``, ``spart_controller``) and
gives it, under one set of parameter names and QoS:

- the model: URDF from the ``robot_description`` topic (RELIABLE + TRANSIENT_LOCAL, depth 1,
  like robot_state_publisher), or the ``robot_description`` / ``urdf_path`` parameters
  (settable at run time); every new description rebuilds the :class:`~.model.Model`, a bad
  one is logged naming the problem and the previous model is kept;
- joint states (sensor_msgs/JointState, read serialized) mapped BY NAME into the model's
  joint-variable order: any order, subsets keep the others' last values, velocity-only
  messages update velocities; messages with none of the model's joints, and messages naming
  model joints without positions or velocities (efforts only), are ignored (each counted,
  warned throttled);
- the base state: a fixed pose (``base: fixed``) or, for ``base: floating``, the latest
  nav_msgs/Odometry (pose of the URDF base link in the world, twist in the base link frame,
  REP 105; a ``child_frame_id`` naming another link rigidly fixed to the base, e.g. a massless
  ``base_footprint``, is converted to the base link exactly, any other frame refused by name)
  no older than ``odom_max_age`` than the joint state, with an optional sensor_msgs/Imu
  override of orientation and angular velocity (its frame: ``imu_link`` or its frame_id, a link
  fixed to the base).

Stamp order (unless ``accept_older_stamps``): a joint's values are taken only from a message
stamped no earlier than the last one of THAT joint (several sources, e.g. an arm and a
gripper stamped a little apart, do not starve each other); odometry stamped before the last
odometry is dropped; both counted, warned throttled.  A clock jump back (simulator reset,
``ros2 bag play --loop``, a restarted publisher) forgets every stamp, with one warning, and
accepts the messages again: detected from the stamps (more than ``clock_jump_back`` s before
the last one) and, as tf2 does, from the node clock (a jump back of /clock under
use_sim_time, or a change of time source).

The node learns about them through callbacks: ``on_model(model)`` after a new model is
installed, ``on_joint_state(sec, nanosec)`` after every accepted joint-state update, and
``on_rejected(what, error)`` when an input is rejected (NaN, wrong lengths, ...).  Nothing
here computes dynamics: the node does, from :meth:`RobotInputs.state`.
"""

from collections import namedtuple
import inspect
import time
import traceback

from nav_msgs.msg import Odometry
import numpy as np
from rcl_interfaces.msg import SetParametersResult
from rclpy.clock import ClockChange, JumpThreshold
from rclpy.duration import Duration
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import String

from .base_estimator import (
    BaseLinkState,
    check_max_age,
    FloatingBaseEstimator,
    frame_state_to_base,
    imu_to_base,
)
from .cdr import CdrError, parse_joint_state, parse_odometry
from .config import BASE_MODES, ConfigError, ModelConfig
from .conversions import (
    finite,
    pose_to_matrix,
    quaternion,
    quaternion_values,
    stamp_seconds,
    vector3,
)
from .joint_states import JointStateMapper
from .model import Model
from .parameters import Param, table
from .runner import freeze_heap
from .stamps import JUMP, jump_back_ns, NEVER, NEWER, order, stamp_ns
from .throttle import LogLimiter
from ..core.errors import InputError, ModelError, SpartError
from ..core.packages import set_package_paths
from ..core.urdf import urdf_text

__all__ = [
    'RobotInputs',
    'RobotState',
    'INPUT_PARAMETERS',
    'ROBOT_DESCRIPTION_QOS',
    'input_qos',
    'guarded',
]

#: robot_state_publisher's robot_description: latched.
ROBOT_DESCRIPTION_QOS = QoSProfile(
    history=HistoryPolicy.KEEP_LAST,
    depth=1,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL,
)

RELIABILITIES = {
    'best_effort': ReliabilityPolicy.BEST_EFFORT,
    'reliable': ReliabilityPolicy.RELIABLE,
}


def input_qos(depth, reliability='best_effort'):
    """
    Sensor inputs (joint_states, odometry, IMU): KEEP_LAST ``depth``, VOLATILE.

    BEST_EFFORT (the default) matches reliable and best-effort publishers alike; RELIABLE matches
    only reliable ones (joint_state_broadcaster is) and never loses a message they send.
    """
    if reliability not in RELIABILITIES:
        raise ConfigError(
            f'input_reliability must be one of {sorted(RELIABILITIES)}, got {reliability!r}'
        )
    if int(depth) < 1:
        raise ConfigError(f'input_queue_depth must be >= 1, got {depth}')
    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST,
        depth=int(depth),
        reliability=RELIABILITIES[reliability],
        durability=DurabilityPolicy.VOLATILE,
    )


#: the model and input parameters every node that needs the robot declares (its table includes
#: them)
INPUT_PARAMETERS = table(
    Param(
        'robot_description',
        '',
        'URDF text of the robot (takes precedence over urdf_path); settable at run time',
        dynamic=True,
    ),
    Param(
        'urdf_path',
        '',
        'path of a URDF (or .xacro) file, used when robot_description is empty; settable at run '
        'time',
        dynamic=True,
    ),
    Param(
        'robot_description_topic',
        'robot_description',
        'std_msgs/String topic with the URDF (RELIABLE + '
        'TRANSIENT_LOCAL); empty = do not subscribe',
    ),
    Param(
        'strict',
        False,
        'physically impossible inertias in the URDF are errors (the model is refused) instead of '
        'warnings',
    ),
    Param(
        'joint_dynamics',
        True,
        "the joints' damping, Coulomb friction and rotor inertia the model declares (URDF "
        '<dynamics damping friction>, joint_dynamics_file) enter inverse and forward dynamics (a '
        "controller compensates them); false: the rigid-body model of SPART's functions",
    ),
    Param(
        'joint_dynamics_file',
        '',
        'YAML file overriding the joints\' damping, friction, armature: {joint (or "*"): '
        '{armature: kg m^2, damping: N m s/rad, friction: N m}} (give spart_sim the same file); '
        '"" = the URDF\'s only',
    ),
    Param(
        'package_paths',
        None,
        'folders where $(find pkg) of a xacro robot description looks for packages (each the '
        'package folder, or a folder holding packages), before ROS_PACKAGE_PATH and the ament '
        'index; unset = those two only',
        type='string_array',
        example=['/home/me/ws/src/my_robot_description'],
    ),
    Param('joint_states_topic', 'joint_states', 'sensor_msgs/JointState input topic'),
    Param(
        'accept_older_stamps',
        False,
        'accept joint_states and odometry stamped before the last one (default: '
        'dropped, per joint for joint_states; counted and warned)',
    ),
    Param(
        'clock_jump_back',
        1.0,
        's: joint_states or odometry stamped more than this before the last one mean the '
        'clock jumped back (simulator reset, bag loop): every stamp is forgotten (warned) and '
        'they are accepted; 0 = only a jump back of the node clock does that',
        low=0.0,
    ),
    Param(
        'base',
        'fixed',
        "'fixed' (base pose parameters) or 'floating' (odometry, optional IMU)",
        choices=BASE_MODES,
    ),
    Param(
        'base_position',
        [0.0, 0.0, 0.0],
        'fixed base: position [x, y, z] in world_frame of the URDF base link (of '
        "the URDF's world link when it has one: its fixed joint places the base) [m]",
        length=3,
    ),
    Param(
        'base_orientation',
        [0.0, 0.0, 0.0, 1.0],
        'fixed base: orientation (x, y, z, w) in world_frame of the URDF '
        "base link (of the URDF's world link when it has one)",
        length=4,
    ),
    Param(
        'odometry_topic',
        'odom',
        'floating base: nav_msgs/Odometry topic (pose of the URDF base link in the world; '
        'twist in the base link frame, REP 105)',
    ),
    Param(
        'odom_max_age',
        0.2,
        's: floating base: odometry is used when its stamp is within this of the joint '
        "state's stamp (0 = no limit)",
        low=0.0,
    ),
    Param(
        'use_imu',
        False,
        'floating base: let a fresh sensor_msgs/Imu override the base orientation and angular '
        'velocity',
    ),
    Param('imu_topic', 'imu/data', 'sensor_msgs/Imu topic (used when use_imu is true)'),
    Param(
        'imu_link',
        '',
        "URDF link of the IMU frame, rigidly attached to the base; empty = the IMU messages' "
        'header.frame_id',
    ),
    Param(
        'imu_max_age',
        0.1,
        "s: an IMU sample is fresh when its stamp is within this of the joint state's stamp",
        low=0.0,
    ),
    Param(
        'world_frame', 'world', 'frame_id of the outputs (the odometry frame for a floating base)'
    ),
    Param(
        'gravity',
        [0.0, 0.0, 0.0],
        'gravity [x, y, z] in world_frame [m/s^2] (0 in space; [0, 0, -9.81] on Earth)',
        length=3,
    ),
    Param(
        'input_queue_depth',
        100,
        'KEEP_LAST depth of the joint_states/odometry/IMU subscriptions',
        low=1,
    ),
    Param(
        'input_reliability',
        'best_effort',
        'QoS reliability of the joint_states/odometry/IMU subscriptions: '
        "'best_effort' (matches every publisher) or 'reliable'",
        choices=('best_effort', 'reliable'),
    ),
)


def guarded(node, limiter, callback, what, on_error=None):
    """
    Wrap a callback so that it never raises.

    A SpartError is logged as one line naming the problem, anything else with its traceback;
    repeated texts are throttled by ``limiter``. ``on_error(what, error)`` (optional) is called
    after the log.
    """

    def wrapped(*args):
        try:
            return callback(*args)
        except SpartError as err:
            if limiter.allow((what, str(err)), time.monotonic()):
                node.get_logger().error(f'{what}: {err}')
            error = err
        except Exception as err:  # noqa: BLE001 - a callback must never kill the node
            if limiter.allow((what, type(err).__name__, str(err)), time.monotonic()):
                node.get_logger().error(
                    f'{what}: unexpected {type(err).__name__}: {err}\n{traceback.format_exc()}'
                )
            error = err
        if on_error is not None:
            on_error(what, error)
        return None

    # rclpy's executors take a timer callback's signature at every call (inspect.signature: ~19
    # us for a function, ~2 when it is given): the one inspect would find, given
    wrapped.__signature__ = _ANY_ARGUMENTS
    return wrapped


#: the signature ``(*args)``
_ANY_ARGUMENTS = inspect.Signature([inspect.Parameter('args', inspect.Parameter.VAR_POSITIONAL)])


RobotState = namedtuple('RobotState', 'base q qd')
RobotState.__doc__ = """A complete robot state for one joint-state stamp: ``base`` a
:class:`~.base_estimator.BaseLinkState` (ROS convention), ``q``, ``qd`` (n_q,) in the model's
joint-variable order (the arrays are the mapper's: copy them to keep them)."""


def _text_of(path):
    """Return the URDF text of the file ``path`` (xacro expanded), or the path if unreadable."""
    try:
        return urdf_text(path)
    except (SpartError, OSError):
        return path


class _Quat:
    """A quaternion's x, y, z, w read from a serialized message (the fields of a message's)."""

    def __init__(self, x, y, z, w):
        self.x, self.y, self.z, self.w = float(x), float(y), float(z), float(w)


class RobotInputs:
    """
    Model, joint states and base state of one robot for ``node`` (see the module docstring).

    ``params``: the values of the :data:`INPUT_PARAMETERS` (the node declared them with its
    table, :mod:`.parameters`); ``model_options``: extra :class:`~.config.ModelConfig` fields
    from the node's own parameters (e.g. the dynamics node's Jacobian links).  It subscribes at
    once; :meth:`destroy` undoes it (a lifecycle node's cleanup).  ``held``: the joint states,
    odometry and IMU are only kept as they arrive and read by :meth:`read_held` (a node that
    computes at a lower rate than its inputs come: one append per message instead of its
    parsing and checks).
    """

    def __init__(
        self,
        node,
        params,
        model_options=None,
        on_model=None,
        on_joint_state=None,
        on_rejected=None,
        held=False,
    ):
        self.node = node
        self.params = p = params
        self.log_limiter = LogLimiter(5.0)
        self.once = LogLimiter(None)
        self._on_model = on_model
        self._on_joint_state = on_joint_state
        self._on_rejected = on_rejected
        if p['base'] not in BASE_MODES:
            raise ConfigError(f'base must be one of {BASE_MODES}, got {p["base"]!r}')
        self.floating = p['base'] == 'floating'
        self.use_imu = self.floating and bool(p['use_imu'])
        self.world_frame = p['world_frame']
        self.gravity = finite('gravity', p['gravity'])
        if self.gravity.shape != (3,):
            raise ConfigError(f'gravity needs 3 numbers [x, y, z], got {list(p["gravity"])}')
        self.odom_max_age = check_max_age('odom_max_age', p['odom_max_age'])  # 0 = no limit
        self.accept_older = bool(p['accept_older_stamps'])
        self.jump_back = jump_back_ns('clock_jump_back', p['clock_jump_back'])
        try:  # for $(find pkg) of a xacro description (urdf_path, robot_description)
            set_package_paths(p['package_paths'] or ())
        except InputError as err:
            raise ConfigError(str(err)) from None
        self.config = ModelConfig(
            base=p['base'],
            imu_link=p['imu_link'] if self.use_imu else '',
            strict=bool(p['strict']),
            joint_dynamics=bool(p['joint_dynamics']),
            joint_dynamics_file=p['joint_dynamics_file'],
            **(model_options or {}),
        ).check()
        self._root_pose = self._fixed_base_state(p['base_position'], p['base_orientation'])
        self.fixed_base = self._root_pose
        self.estimator = FloatingBaseEstimator(p['imu_max_age'])
        self._odom_stamp = None  # s, of the last odometry
        self._odom_ns = NEVER  # ns, the same exactly (stamp order)

        self.model = None
        self.description = None
        self.joints = JointStateMapper([])
        self._pending_joints = {}  # joint states received before any model
        # (sec, nanosec) of the newest accepted joint state (the control clock of event-driven
        # nodes: a second source stamped a little earlier does not turn it back); after a clock
        # jump, the jumped one's; with accept_older_stamps, the last one's
        self.last_stamp = None
        #: callbacks(names, velocities) given every joint_states message first (another unit's
        #: joints in it, e.g. the base's reaction wheels: no second subscription)
        self.joint_listeners = []
        self.last_receipt = None  # node clock (s) when it arrived (joints.received: steady clock)
        self.odom_receipt = None
        self.odom_steady = float('nan')  # steady clock (time.monotonic) of the last odometry
        #: counters, e.g. for a status message: joint_states accepted, with no model joint, naming
        #: model joints without positions or velocities, older than each of their joints' last
        #: stamp; inputs rejected (errors); odometry accepted, older; clock jumps back
        self.counts = {
            'joint_states': 0,
            'ignored': 0,
            'no_values': 0,
            'older_stamp': 0,
            'rejected': 0,
            'odometry': 0,
            'odometry_older': 0,
            'clock_jumps': 0,
        }

        qos = input_qos(p['input_queue_depth'], p['input_reliability'])
        #: held inputs (``held``): the messages are only kept as they arrive (serialized) and
        #: read by :meth:`read_held`, e.g. on a node's output timer
        self.held = bool(held)
        self._held_joints, self._held_odometry, self._held_imu = [], None, None
        self.joint_states_sub = node.create_subscription(
            JointState,
            p['joint_states_topic'],
            self._held_joints.append
            if self.held
            else self.guard(self._on_joint_states_raw, 'joint_states'),
            qos,
            raw=True,
        )  # serialized: read by spart_ros.nodes.cdr (rclpy's conversion costs more)
        self.odometry_sub = self.imu_sub = self.description_sub = None
        if self.floating:
            self.odometry_sub = node.create_subscription(
                Odometry,
                p['odometry_topic'],
                self._hold_odometry
                if self.held
                else self.guard(self._on_odometry_raw, 'odometry'),
                qos,
                raw=True,
            )  # serialized: read by spart_ros.nodes.cdr (rclpy's conversion costs more)
            if self.use_imu:
                self.imu_sub = (
                    node.create_subscription(Imu, p['imu_topic'], self._hold_imu, qos, raw=True)
                    if self.held
                    else node.create_subscription(
                        Imu, p['imu_topic'], self.guard(self._on_imu, 'imu'), qos
                    )
                )
        if p['robot_description_topic']:
            self.description_sub = node.create_subscription(
                String,
                p['robot_description_topic'],
                self.guard(self._on_description, 'robot_description'),
                ROBOT_DESCRIPTION_QOS,
            )
        self._on_set = self._on_set_parameters
        node.add_on_set_parameters_callback(self._on_set)
        # like tf2's Buffer: any jump back of the node clock (/clock under use_sim_time) or a
        # change of time source forgets the stamps (keep the handle: it unregisters when freed)
        self._jump_handle = (
            None
            if self.accept_older
            else node.get_clock().create_jump_callback(
                JumpThreshold(
                    min_forward=None, min_backward=Duration(nanoseconds=-1), on_clock_change=True
                ),
                post_callback=self.guard(self._on_clock_jump, 'clock jump'),
            )
        )

    def destroy(self):
        """Unsubscribe and stop watching the parameters and the clock."""
        node = self.node
        node.remove_on_set_parameters_callback(self._on_set)
        for sub in (self.joint_states_sub, self.odometry_sub, self.imu_sub, self.description_sub):
            if sub is not None:
                node.destroy_subscription(sub)
        self.joint_states_sub = self.odometry_sub = self.imu_sub = self.description_sub = None
        self._jump_handle = None
        self._on_model = self._on_joint_state = self._on_rejected = None

    def load_initial_model(self):
        """
        Load the model from the ``robot_description`` / ``urdf_path`` parameters, if set.

        Call it once the node's own set-up is done: ``on_model`` runs.
        """
        p = self.params
        if p['robot_description']:
            self.load_model(p['robot_description'], 'parameter robot_description')
        elif p['urdf_path']:
            self.load_model(p['urdf_path'], f'urdf_path {p["urdf_path"]!r}', path=True)

    # -- plumbing -------------------------------------------------------------------------
    def guard(self, callback, what):
        """Return ``callback`` wrapped by :func:`guarded`; errors count as rejected inputs."""
        return guarded(self.node, self.log_limiter, callback, what, self._rejected)

    def _rejected(self, what, error):
        self.counts['rejected'] += 1
        if self._on_rejected is not None:
            self._on_rejected(what, error)

    def warn_throttled(self, key, text):
        if self.log_limiter.allow(key, time.monotonic()):
            self.node.get_logger().warning(text)

    def info_throttled(self, key, text):
        if self.log_limiter.allow(key, time.monotonic()):
            self.node.get_logger().info(text)

    def input_topics(self):
        """Names of the subscribed input topics (for a start-up log line)."""
        subs = (self.joint_states_sub, self.odometry_sub, self.imu_sub, self.description_sub)
        return [s.topic_name for s in subs if s is not None]

    def _fixed_base_state(self, position, orientation):
        if len(position) != 3 or len(orientation) != 4:
            raise ConfigError(
                f'base_position needs 3 numbers and base_orientation 4 (x, y, z, w); got '
                f'{list(position)} and {list(orientation)}'
            )
        R = quaternion('base_orientation', _Quat(*orientation))
        p = finite('base_position', position)
        return BaseLinkState(R, p, np.zeros(3), np.zeros(3))

    # -- model ----------------------------------------------------------------------------
    def load_model(self, source, origin, path=False, expand_xacro=True):
        """
        Build and install a model from URDF text (or a file path with ``path``).

        On failure log and keep the previous one. ``expand_xacro=False`` (text from another
        process) refuses xacro instead of running it.  Returns (success, message).
        """
        keep = 'keeping the previous model' if self.model else 'no model loaded yet'
        try:
            if not path and '<' not in source:
                raise ModelError('the robot description is not URDF XML (no "<" in it)')
            model = Model.from_urdf(source, self.config, expand_xacro=expand_xacro)
        except SpartError as err:
            self.node.get_logger().error(
                f'robot description from {origin} rejected: {err} ({keep})'
            )
            return False, str(err)
        except Exception as err:  # noqa: BLE001
            self.node.get_logger().error(
                f'robot description from {origin} rejected: unexpected '
                f'{type(err).__name__}: {err} ({keep})\n{traceback.format_exc()}'
            )
            return False, f'{type(err).__name__}: {err}'
        model.fast.gravity = self.gravity
        for text in model.warnings:
            self.node.get_logger().warning(f'robot description from {origin}: {text}')
        self.fixed_base = self._root_pose
        if model.robot.base_pose is not None:  # a URDF 'world' root: the parameters place it
            R, p = self._root_pose.R_b, self._root_pose.p_b
            T = np.asarray(model.robot.base_pose, float)
            self.fixed_base = BaseLinkState(
                R @ T[:3, :3], p + R @ T[:3, 3], np.zeros(3), np.zeros(3)
            )
        joints = JointStateMapper(model.q_names, previous=self.joints, ignored=model.followers)
        if self._pending_joints:
            names = [n for n in self._pending_joints if n in joints.index]
            if names:
                joints.update(
                    names,
                    [self._pending_joints[n][0] for n in names],
                    [self._pending_joints[n][1] for n in names],
                )
            self._pending_joints.clear()
        # a file's text as other nodes publish it (spart_sim, robot_state_publisher: xacro
        # expanded), so that the same robot on robot_description is not taken as a new model
        self.description = _text_of(source) if path else source
        self.model, self.joints = model, joints
        self.node.get_logger().info(f'{model.summary()} (from {origin})')
        if self._on_model is not None:
            self._on_model(model)
        # the model (numba, llvmlite, the node's own buffers) out of the garbage collector's reach
        # now, between two states, rather than in a full collection of milliseconds while
        # commanding
        freeze_heap()
        return True, 'ok'

    def _on_description(self, msg):
        if msg.data == self.description:
            return
        # robot_state_publisher publishes expanded URDF; xacro on text from any publisher
        # would evaluate its expressions and read files and environment variables here
        self.load_model(msg.data, f'topic {self.description_sub.topic_name}', expand_xacro=False)

    def _on_set_parameters(self, params):
        for param in params:
            if param.name in ('robot_description', 'urdf_path') and param.value:
                ok, message = self.load_model(
                    param.value, f'parameter {param.name}', path=param.name == 'urdf_path'
                )
                if not ok:
                    return SetParametersResult(successful=False, reason=message)
        return SetParametersResult(successful=True)

    # -- held inputs (read on a timer) -----------------------------------------------------
    def _hold_odometry(self, data):
        self._held_odometry = data

    def _hold_imu(self, data):
        self._held_imu = data

    def read_held(self):
        """
        Read the inputs held since the last call (``held``).

        Return (joint_states messages received, joint states applied).

        The newest odometry and IMU message, then of the joint states the newest-stamped one of
        each set of joint names (each source: an arm, a gripper; the last one to arrive with
        ``accept_older_stamps``), in the order they arrived;
        ``on_joint_state`` is not called (the caller computes once for all).  Each input is
        read as its callback reads it (checks, warnings, counts); a bad one is logged, the
        others are still read.
        """
        if not self.held:
            return 0, 0
        odometry, self._held_odometry = self._held_odometry, None
        imu, self._held_imu = self._held_imu, None
        joints = self._held_joints
        if not joints and odometry is None and imu is None:
            return 0, 0
        messages = joints[:]
        del joints[: len(messages)]  # appended to from the middleware's side only
        if odometry is not None:
            self.guard(self._on_odometry_raw, 'odometry')(odometry)
        if imu is not None:
            self.guard(lambda data: self._on_imu(deserialize_message(data, Imu)), 'imu')(imu)
        newest = {}  # names -> (stamp, arrival, the parsed message)
        read = self.guard(self._read_joint_state, 'joint_states')
        for k, data in enumerate(messages):
            parsed = read(data)
            if parsed is None:
                continue
            stamp = (parsed[0], parsed[1])
            last = newest.get(parsed[2])
            if last is None or self.accept_older or stamp >= last[0]:
                newest[parsed[2]] = (stamp, k, parsed)
        callback, self._on_joint_state = self._on_joint_state, None
        applied = self.counts['joint_states']
        try:
            apply = self.guard(lambda parsed: self.joint_state(*parsed), 'joint_states')
            for _, _, parsed in sorted(newest.values(), key=lambda item: item[1]):
                apply(parsed)
        finally:
            self._on_joint_state = callback
        return len(messages), self.counts['joint_states'] - applied

    @staticmethod
    def _read_joint_state(data):
        """(sec, nanosec, names, positions, velocities) of a serialized JointState."""
        try:
            return parse_joint_state(data)
        except CdrError:  # another encoding: rclpy's deserializer (slower, same result)
            msg = deserialize_message(data, JointState)
            stamp = msg.header.stamp
            return stamp.sec, stamp.nanosec, tuple(msg.name), msg.position, msg.velocity

    # -- joint states ---------------------------------------------------------------------
    def _on_joint_states_raw(self, data):
        try:
            sec, nanosec, names, positions, velocities = parse_joint_state(data)
        except CdrError:  # another encoding: rclpy's deserializer (slower, same result)
            msg = deserialize_message(data, JointState)
            sec, nanosec, names = msg.header.stamp.sec, msg.header.stamp.nanosec, tuple(msg.name)
            positions, velocities = msg.position, msg.velocity
        self.joint_state(sec, nanosec, names, positions, velocities)

    def joint_state(self, sec, nanosec, names, positions, velocities):
        """One joint state (arrays in ``names`` order): map it, then ``on_joint_state``."""
        for listener in self.joint_listeners:  # e.g. the wheels' speeds, before the tick
            listener(names, velocities)
        if self.model is None:
            if len(positions) == len(names):
                vel = velocities if len(velocities) == len(names) else [0.0] * len(names)
                for name, q, v in zip(names, positions, vel):
                    self._pending_joints[name] = (float(q), float(v))
            return
        update = self.joints.update(
            names,
            positions,
            velocities,
            time.monotonic(),
            None if self.accept_older else stamp_ns(sec, nanosec),
            self.jump_back,
        )
        if not update.applied and self.joints.n:
            self._not_applied(sec, nanosec, names, positions, velocities, update)
            return
        if update.jumped:  # the mapper forgot the joints' stamps, then recorded this one's
            self.forget_stamps(
                f'joint_states stamped {sec + 1e-9 * nanosec:.9f} s, more than clock_jump_back '
                f'({1e-9 * self.jump_back} s) before the last one of a joint of theirs',
                joints=False,
            )
        elif update.applied < update.matched:
            self.warn_throttled(
                'older joints',
                f'joint_states stamped {sec + 1e-9 * nanosec:.9f} s: '
                f'{update.matched - update.applied} of their joints have newer values (kept)',
            )
        if update.missing_velocities and self.once.allow('no velocities', 0.0):
            self.node.get_logger().warning(
                'joint_states without velocities: their joint velocities count as zero '
                '(warned once)'
            )
        if update.unknown and self.once.allow(('unknown', update.unknown), 0.0):
            self.node.get_logger().info(
                f'ignoring joints not in the model: {list(update.unknown)}'
            )
        self.counts['joint_states'] += 1
        if (
            self.accept_older
            or update.jumped
            or self.last_stamp is None
            or (sec, nanosec) >= self.last_stamp
        ):
            self.last_stamp = (sec, nanosec)
        self.last_receipt = self.now()
        if self._on_joint_state is not None:
            self._on_joint_state(sec, nanosec)

    def _not_applied(self, sec, nanosec, names, positions, velocities, update):
        """Count and warn (throttled) a joint_states message that changed nothing."""
        shown = list(names[:8]) + (['...'] if len(names) > 8 else [])
        if not update.matched:
            self.counts['ignored'] += 1
            self.warn_throttled(
                'no model joint',
                f"joint_states with none of the model's joints (names {shown}): "
                f'ignored ({self.counts["ignored"]} so far)',
            )
        elif not (len(positions) or len(velocities)):
            self.counts['no_values'] += 1
            self.warn_throttled(
                'no values',
                f'joint_states naming model joints without positions or velocities '
                f'(efforts only?, names {shown}): ignored ({self.counts["no_values"]} so far)',
            )
        else:
            self.counts['older_stamp'] += 1
            self.warn_throttled(
                'older stamp',
                f'joint_states stamped {sec + 1e-9 * nanosec:.9f} s, before the last '
                f'one of each of their joints (names {shown}): dropped '
                f'({self.counts["older_stamp"]} so far; parameters accept_older_stamps, '
                'clock_jump_back)',
            )

    def forget_stamps(self, why, joints=True):
        """
        After a clock jump back (``why``, a sentence starting with the input that showed it).

        Forget the last stamps of the odometry and (with ``joints``) of the joints, so that the
        messages of the new clock are taken; warned (throttled per input).
        """
        if joints:
            self.joints.forget_stamps()
        self._odom_ns = NEVER
        self.last_stamp = (
            None  # else the first joint state of the new clock, older, would not be the newest
        )
        self.counts['clock_jumps'] += 1
        self.warn_throttled(
            ('clock jump', why.split()[0]),
            f'clock jump back: {why}; stamps forgotten, joint_states and odometry '
            f'accepted again ({self.counts["clock_jumps"]} so far)',
        )

    def _on_clock_jump(self, jump):
        if jump.clock_change in (ClockChange.ROS_TIME_ACTIVATED, ClockChange.ROS_TIME_DEACTIVATED):
            self.forget_stamps(f'the node clock changed source ({jump.clock_change.name})')
        else:
            self.forget_stamps(
                f'the node clock jumped back by {-jump.delta.nanoseconds * 1e-9:.9f} s'
            )

    def now(self):
        """Return the node clock in seconds (sim time under use_sim_time)."""
        return self.node.get_clock().now().nanoseconds * 1e-9

    # -- base -----------------------------------------------------------------------------
    def _on_odometry_raw(self, data):
        try:
            sec, nanosec, frame_id, child, p, q, v, w = parse_odometry(data)
        except CdrError:  # another encoding: rclpy's deserializer (slower, same result)
            self._on_odometry(deserialize_message(data, Odometry))
            return
        R_b = quaternion_values('odometry pose.orientation', *q)
        p_b = finite('odometry pose.position', p)
        v_b = finite('odometry twist linear', v)
        w_b = finite('odometry twist angular', w)
        self._odometry(sec, nanosec, frame_id, child, R_b, p_b, v_b, w_b)

    def _on_odometry(self, msg):
        R_b, p_b = pose_to_matrix('odometry pose', msg.pose.pose)
        v_b = vector3('odometry twist linear', msg.twist.twist.linear)
        w_b = vector3('odometry twist angular', msg.twist.twist.angular)
        stamp, header = msg.header.stamp, msg.header
        self._odometry(
            stamp.sec, stamp.nanosec, header.frame_id, msg.child_frame_id, R_b, p_b, v_b, w_b
        )

    def _odometry(self, sec, nanosec, frame_id, child_frame_id, R_b, p_b, v_b, w_b):
        """One odometry of the base (REP 105: pose in ``frame_id``, twist in the child frame)."""
        if child_frame_id:
            # REP 105 allows odometry of any frame fixed to the base (base_footprint, the base
            # link under a massless root): converted exactly; another frame is refused by name
            model = self.model
            if model is None:
                return  # its frame cannot be checked yet; the next one will be
            T_b_f = model.frame_in_base(child_frame_id, 'odometry child_frame_id')
            if T_b_f is not None:
                R_b, p_b, v_b, w_b = frame_state_to_base(T_b_f, R_b, p_b, v_b, w_b)
        if (
            frame_id
            and frame_id != self.world_frame
            and self.once.allow(('odom frame', frame_id), 0.0)
        ):
            self.node.get_logger().warning(
                f'odometry frame_id {frame_id!r} differs from world_frame '
                f'{self.world_frame!r} (warned once)'
            )
        ns = stamp_ns(sec, nanosec)
        verdict = NEWER if self.accept_older else order(ns, self._odom_ns, self.jump_back)
        if verdict == JUMP:
            self.forget_stamps(
                f'odometry stamped {ns * 1e-9:.9f} s, more than clock_jump_back '
                f'({1e-9 * self.jump_back} s) before the last one'
            )
        elif verdict != NEWER:
            self.counts['odometry_older'] += 1
            self.warn_throttled(
                'older odometry',
                f'odometry stamped {ns * 1e-9:.9f} s, before the last one '
                f'({self._odom_ns * 1e-9:.9f} s): dropped ({self.counts["odometry_older"]} so '
                'far; parameters accept_older_stamps, clock_jump_back)',
            )
            return
        self.estimator.set_odometry(R_b, p_b, v_b, w_b)
        self._odom_ns = ns
        self._odom_stamp = sec + 1e-9 * nanosec  # (stamp_seconds)
        self.odom_receipt = self.now()
        self.odom_steady = time.monotonic()
        self.counts['odometry'] += 1

    def _on_imu(self, msg):
        model = self.model
        if model is None:
            return
        frame = self.config.imu_link or msg.header.frame_id
        if not frame:
            raise InputError('IMU message without header.frame_id and no imu_link parameter')
        R_b_imu = model.imu_rotation(frame)
        has_orientation = msg.orientation_covariance[0] != -1.0
        has_rate = msg.angular_velocity_covariance[0] != -1.0
        R_w_imu = quaternion('IMU orientation', msg.orientation) if has_orientation else None
        w_imu = vector3('IMU angular_velocity', msg.angular_velocity) if has_rate else None
        R_b, w_b = imu_to_base(R_b_imu, R_w_imu, w_imu)
        self.estimator.set_imu(R_b, w_b, stamp_seconds(msg.header.stamp))

    def base_state(self, stamp):
        """
        Return base state for a joint state stamped ``stamp`` = (sec, nanosec), or None.

        See :meth:`unavailable` for why.
        """
        if not self.floating:
            return self.fixed_base
        t = stamp[0] + 1e-9 * stamp[1]
        if (
            self.odom_max_age
            and self._odom_stamp is not None
            and abs(t - self._odom_stamp) > self.odom_max_age
        ):
            return None
        return self.estimator.state(t)

    # -- the state the node computes with ---------------------------------------------------
    def unavailable(self, stamp=None):
        """
        Why no complete state exists for ``stamp`` (default: the last joint state).

        As one sentence; None when :meth:`state` has one.
        """
        return self._why_unavailable(stamp)[0]

    def log_unavailable(self, stamp=None):
        """
        Log (throttled) why no state exists for ``stamp``.

        INFO while an input has not arrived yet (start-up), WARN when one is there but too old
        (stale odometry).
        """
        why, stale = self._why_unavailable(stamp)
        if why is None:
            return
        if stale:
            self.warn_throttled('stale input', why)
        else:
            self.info_throttled('waiting', why)

    def _why_unavailable(self, stamp):
        """(sentence or None, True when an input is stale rather than missing)."""
        if self.model is None:
            return 'waiting for a robot description', False
        if not self.joints.ready or self.last_stamp is None:
            return (
                'waiting for joint states of '
                f'{self.joints.missing() if self.last_stamp else self.model.q_names}',
                False,
            )
        stamp = self.last_stamp if stamp is None else stamp
        if self.floating:
            if self.estimator.odometry is None:
                return f'waiting for odometry on {self.odometry_sub.topic_name}', False
            if self.base_state(stamp) is None:
                age = stamp[0] + 1e-9 * stamp[1] - self._odom_stamp
                return (
                    f'odometry stamp is {abs(age):.3f} s {"older" if age > 0 else "newer"} than '
                    f'the joint state (odom_max_age {self.odom_max_age} s)',
                    True,
                )
        return None, False

    def state(self, stamp=None):
        """:data:`RobotState` for ``stamp`` (default: the last joint state), or None."""
        stamp = self.last_stamp if stamp is None else stamp
        if self.model is None or stamp is None or not self.joints.ready:
            return None
        base = self.base_state(stamp)
        if base is None:
            return None
        return RobotState(base, self.joints.positions, self.joints.velocities)
