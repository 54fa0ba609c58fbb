r"""
Helpers for tests that run spart_ros nodes as separate processes and talk to them over DDS.

The test process talks to them with a real rclpy node (no mocks).

Typical use (see test_smoke_node.py, and the fixtures in conftest.py)::

    from node_helpers import RosTestNode, start_node

    with start_node("spart_ros", "heartbeat_node",
                    parameters={"status_period": 0.2}) as proc, \
         RosTestNode("my_test") as ros:
        status = ros.subscribe(String, "/spart_heartbeat/status", LATCHED_QOS)
        ros.wait_for(lambda: status.messages, 10.0, "first status",
                     process=proc)

Everything that waits takes a timeout in seconds, multiplied by the
environment variable SPART_TEST_TIMEOUT_SCALE (default 1) for slow machines.
Failures raise ``WaitTimeout`` whose message includes the node's output.

This module imports rclpy lazily (only RosTestNode needs it), so importing
it costs nothing for tests that only start processes.
"""

import json
import os
from pathlib import Path
import random
import re
import signal
import subprocess
import sys
import tempfile
import time

import yaml

__all__ = [  # noqa: F822 (the QoS constants come from __getattr__ below, PEP 562)
    'LATCHED_QOS',
    'RELIABLE_QOS',
    'BEST_EFFORT_QOS',
    'WaitTimeout',
    'NodeNotInstalled',
    'NodeProcess',
    'RosTestNode',
    'MessageCollector',
    'installed_executable',
    'node_command',
    'ros_env',
    'scaled',
    'start_node',
    'wait_until',
]

TIMEOUT_SCALE = float(os.environ.get('SPART_TEST_TIMEOUT_SCALE', '1') or 1)


def scaled(seconds):
    """Return a timeout scaled by SPART_TEST_TIMEOUT_SCALE."""
    return seconds * TIMEOUT_SCALE


class WaitTimeout(AssertionError):
    """A wait ran out of time (an AssertionError, so pytest reports it as a failure)."""


class NodeNotInstalled(RuntimeError):
    """The package/executable is not in the colcon install on AMENT_PREFIX_PATH."""


def wait_until(predicate, timeout, what='condition', period=0.02, process=None):
    """
    Poll ``predicate()`` until it returns a truthy value, which is returned.

    Raises WaitTimeout after ``scaled(timeout)`` seconds, or at once if
    ``process`` (a NodeProcess) has exited; the message names ``what`` and
    carries the process output.
    """
    deadline = time.monotonic() + scaled(timeout)
    while True:
        value = predicate()
        if value:
            return value
        if process is not None and not process.is_running():
            raise WaitTimeout(
                f'{process.name} exited (code {process.returncode}) '
                f'while waiting for {what}\n{process.describe()}'
            )
        if time.monotonic() >= deadline:
            msg = f'timed out after {scaled(timeout):.1f} s waiting for {what}'
            if process is not None:
                msg += '\n' + process.describe()
            raise WaitTimeout(msg)
        time.sleep(period)


# --------------------------------------------------------------------------
# environment and executables
# --------------------------------------------------------------------------


def ros_env(extra=None):
    """
    Environment for a node process.

    This process's, with unbuffered, uncoloured logs and a ROS_DOMAIN_ID (random in 1..100 if none
    is set, and then also set here so the test process uses the same one).
    """
    if not os.environ.get('ROS_DOMAIN_ID'):
        os.environ['ROS_DOMAIN_ID'] = str(random.randint(1, 100))
    env = dict(os.environ)
    env.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    env['PYTHONUNBUFFERED'] = '1'
    env['RCUTILS_COLORIZED_OUTPUT'] = '0'
    env['RCUTILS_LOGGING_BUFFERED_STREAM'] = '0'
    if extra:
        env.update({k: str(v) for k, v in extra.items()})
    return env


def installed_executable(package, executable):
    """
    Path of ``<prefix>/lib/<package>/<executable>`` of the installed package.

    The prefix comes from the ament index (AMENT_PREFIX_PATH), i.e. the colcon
    install space: sourced by scripts/env.sh, set by ``colcon test``.
    """
    from ament_index_python.packages import get_package_prefix, PackageNotFoundError

    try:
        prefix = get_package_prefix(package)
    except PackageNotFoundError:
        raise NodeNotInstalled(
            f'package {package!r} is not installed on AMENT_PREFIX_PATH='
            f'{os.environ.get("AMENT_PREFIX_PATH", "")!r}: run '
            "'bash scripts/setup.sh' and 'source scripts/env.sh'"
        ) from None
    path = Path(prefix) / 'lib' / package / executable
    if not (path.is_file() and os.access(path, os.X_OK)):
        raise NodeNotInstalled(
            f'{path} is not an installed executable: is '
            f'{executable!r} a console_scripts entry of setup.py, '
            'and was the package rebuilt (scripts/setup.sh)?'
        )
    return path


def _ros_arguments(
    name=None, namespace=None, remappings=None, params_file=None, log_level=None, ros_args=()
):
    out = []
    if name:
        out += ['-r', f'__node:={name}']
    if namespace:
        out += ['-r', f'__ns:={namespace if namespace.startswith("/") else "/" + namespace}']
    for src, dst in (remappings or {}).items():
        out += ['-r', f'{src}:={dst}']
    if params_file:
        out += ['--params-file', str(params_file)]
    if log_level:
        out += ['--log-level', log_level]
    out += list(ros_args)
    return ['--ros-args'] + out if out else []


def node_command(package, executable, *, module=None, args=(), **ros):
    """
    Command line of a node.

    The installed executable, or ``python -m module`` when ``module`` is given (for code not
    installed yet). Keyword arguments as for ``start_node`` (name, namespace, remappings,
    params_file, log_level, ros_args).
    """
    if module:
        cmd = [sys.executable, '-m', module]
    else:
        cmd = [str(installed_executable(package, executable))]
    return cmd + list(args) + _ros_arguments(**ros)


def write_params_file(parameters, path, node='/**'):
    """
    Write ``{node: {ros__parameters: parameters}}`` as YAML.

    Any size, no shell quoting issues, unlike ``-p name:=value``.
    """
    with open(path, 'w', encoding='utf-8') as f:
        yaml.safe_dump(
            {node: {'ros__parameters': dict(parameters)}},
            f,
            default_flow_style=False,
            sort_keys=True,
        )
    return path


# --------------------------------------------------------------------------
# node processes
# --------------------------------------------------------------------------


class NodeProcess:
    """
    A node running as a child process (own session/process group).

    Output (stdout + stderr) goes to a log file, never a pipe, so a chatty
    node can never block; read it with ``output()``. Use as a context
    manager, or call ``stop()``: SIGINT (the node's clean shutdown), then
    SIGTERM, then SIGKILL to the whole process group.
    """

    def __init__(self, cmd, *, name=None, env=None, cwd=None, log_dir=None):
        self.cmd = [str(c) for c in cmd]
        self.name = name or Path(self.cmd[0]).name
        self.env = env if env is not None else ros_env()
        self.cwd = cwd
        self._tmpdir = None
        if log_dir is None:
            self._tmpdir = tempfile.TemporaryDirectory(prefix='spart_node_')
            log_dir = self._tmpdir.name
        safe = re.sub(r'[^A-Za-z0-9_.-]', '_', self.name)
        self.log_path = Path(log_dir) / f'{safe}.{os.getpid()}.{id(self):x}.log'
        self.proc = None
        self._log = None

    # -- life cycle --
    def start(self):
        self._log = open(self.log_path, 'wb')
        # a process group of its own (stopped as one), in the test's session: a new session would
        # be a scheduling group of its own (autogroup) and escape the test worker's CPU priority
        self.proc = subprocess.Popen(
            self.cmd,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=self.env,
            cwd=self.cwd,
            process_group=0,
        )
        return self

    def __enter__(self):
        if self.proc is None:
            self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    @property
    def returncode(self):
        return self.proc.poll() if self.proc else None

    def is_running(self):
        return self.proc is not None and self.proc.poll() is None

    def _signal_group(self, sig):
        try:
            os.killpg(self.proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def wait_exit(self, timeout=120.0):
        """
        Wait until the process exits (a node refusing its parameters); return its exit code.

        None if it still runs after ``timeout`` s (scaled).  Generous on purpose: a refused node
        exits within seconds, but one at nice 19 beside a busy loop took more than 30 s to do so.
        """
        try:
            return self.proc.wait(scaled(timeout))
        except subprocess.TimeoutExpired:
            return None

    def stop(self, timeout=10.0):
        """
        Stop the node and return its exit code (0 = clean shutdown).

        Idempotent. SIGINT first and up to ``timeout`` s for a clean exit,
        then SIGTERM (3 s), then SIGKILL, each to the process group.
        """
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            try:
                self.proc.send_signal(signal.SIGINT)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(scaled(timeout))
            except subprocess.TimeoutExpired:
                self._signal_group(signal.SIGTERM)
                try:
                    self.proc.wait(scaled(3.0))
                except subprocess.TimeoutExpired:
                    self._signal_group(signal.SIGKILL)
                    self.proc.wait(10.0)
        # the node is gone: make sure none of its children outlive it
        self._signal_group(signal.SIGKILL)
        if self._log is not None and not self._log.closed:
            self._log.close()
        return self.proc.returncode

    def cleanup(self):
        """Stop and delete the log directory (if it is our temporary one)."""
        self.stop()
        if self._tmpdir is not None:
            self._tmpdir.cleanup()
            self._tmpdir = None

    # -- output --
    def output(self):
        """Everything the node printed so far (stdout and stderr)."""
        try:
            return self.log_path.read_text(encoding='utf-8', errors='replace')
        except FileNotFoundError:
            return ''

    def wait_for_output(self, pattern, timeout=10.0):
        """Wait until the output matches the regular expression ``pattern``; return the match."""
        rx = re.compile(pattern)
        return wait_until(
            lambda: rx.search(self.output()),
            timeout,
            f'output matching {pattern!r} from {self.name}',
            period=0.05,
            process=self,
        )

    def describe(self, tail=60):
        state = 'running' if self.is_running() else f'exited with code {self.returncode}'
        lines = self.output().splitlines()[-tail:]
        body = '\n'.join('    | ' + line for line in lines) or '    | (no output)'
        return f'--- {self.name} (pid {self.pid}, {state})\n    $ {" ".join(self.cmd)}\n{body}'

    def __repr__(self):
        return f'<NodeProcess {self.name} pid={self.pid} rc={self.returncode}>'


def start_node(
    package,
    executable,
    *,
    name=None,
    namespace=None,
    parameters=None,
    remappings=None,
    log_level=None,
    ros_args=(),
    args=(),
    module=None,
    env=None,
    wait_for=None,
    wait_timeout=15.0,
):
    """
    Start a node of ``package`` and return its (started) NodeProcess.

    package, executable: the installed ``lib/<package>/<executable>``
        (``ros2 run package executable``); or ``module`` to run ``python -m
        module`` instead.
    name, namespace: node name / namespace remappings (``__node``, ``__ns``).
    parameters: dict written to a YAML parameter file (``--params-file``).
    remappings: dict ``{from: to}`` of topic/service remappings.
    env: extra environment variables (added to ``ros_env()``).
    wait_for: optional regular expression to wait for in the node output
        (e.g. a "ready" log line) before returning.
    """
    proc_env = ros_env(env)
    tmp = tempfile.TemporaryDirectory(prefix='spart_node_')
    params_file = None
    if parameters:
        params_file = write_params_file(parameters, Path(tmp.name) / 'params.yaml')
    cmd = node_command(
        package,
        executable,
        module=module,
        args=args,
        name=name,
        namespace=namespace,
        remappings=remappings,
        params_file=params_file,
        log_level=log_level,
        ros_args=ros_args,
    )
    proc = NodeProcess(cmd, name=name or executable, env=proc_env, log_dir=tmp.name)
    proc._tmpdir = tmp  # removed by cleanup()
    proc.start()
    if wait_for:
        try:
            proc.wait_for_output(wait_for, wait_timeout)
        except BaseException:
            proc.stop()
            raise
    return proc


# --------------------------------------------------------------------------
# the test side of DDS: a real rclpy node in the test process
# --------------------------------------------------------------------------


def _qos():
    from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

    reliable = QoSProfile(
        history=HistoryPolicy.KEEP_LAST,
        depth=10,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.VOLATILE,
    )
    latched = QoSProfile(
        history=HistoryPolicy.KEEP_LAST,
        depth=1,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.TRANSIENT_LOCAL,
    )
    best_effort = QoSProfile(
        history=HistoryPolicy.KEEP_LAST,
        depth=10,
        reliability=ReliabilityPolicy.BEST_EFFORT,
        durability=DurabilityPolicy.VOLATILE,
    )
    return reliable, latched, best_effort


def __getattr__(name):  # lazy QoS constants: importing rclpy only when used
    if name in ('RELIABLE_QOS', 'LATCHED_QOS', 'BEST_EFFORT_QOS'):
        reliable, latched, best_effort = _qos()
        return {'RELIABLE_QOS': reliable, 'LATCHED_QOS': latched, 'BEST_EFFORT_QOS': best_effort}[
            name
        ]
    raise AttributeError(name)


class MessageCollector:
    """Keeps every message received on a subscription (with receive times)."""

    def __init__(self, topic):
        self.topic = topic
        self.messages = []
        self.times = []

    def __call__(self, msg):
        self.messages.append(msg)
        self.times.append(time.monotonic())

    def __len__(self):
        return len(self.messages)

    @property
    def last(self):
        return self.messages[-1] if self.messages else None

    def matching(self, predicate):
        return [m for m in self.messages if predicate(m)]

    def clear(self):
        self.messages.clear()
        self.times.clear()


class RosTestNode:
    """
    An rclpy node with its own context and executor, for the test side.

    Its own ``rclpy.Context`` means it never interferes with other rclpy use
    in the same test process. All waits spin this node's executor, so
    subscriptions and futures make progress while waiting.
    """

    def __init__(self, name='spart_test', namespace=None):
        import rclpy
        from rclpy.executors import SingleThreadedExecutor

        ros_env()  # make sure ROS_DOMAIN_ID is set before init
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node(name, namespace=namespace, context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self._clients = {}  # (srv_type, service): one client each, reused (see call)
        self._closed = False

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def close(self):
        if self._closed:
            return
        self._closed = True
        try:
            self.executor.remove_node(self.node)
            self.executor.shutdown(timeout_sec=1.0)
            self.node.destroy_node()
        finally:
            if self.context.ok():
                self.context.try_shutdown()

    @property
    def logger(self):
        return self.node.get_logger()

    # -- spinning --
    def spin_once(self, timeout=0.05):
        self.executor.spin_once(timeout_sec=timeout)

    def spin_for(self, seconds):
        """Spin for a fixed time (use sparingly: prefer wait_for)."""
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.spin_once(min(0.05, max(0.0, end - time.monotonic())))

    def spin_until(self, predicate, timeout, period=0.05):
        """Spin until ``predicate()`` is truthy; return its value, or None on timeout."""
        deadline = time.monotonic() + scaled(timeout)
        while True:
            value = predicate()
            if value:
                return value
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            self.spin_once(min(period, remaining))

    def wait_for(self, predicate, timeout, what='condition', process=None):
        """
        Spin until ``predicate()`` is truthy and return its value.

        Raise WaitTimeout (with the output of ``process``, a NodeProcess or a list of them)
        otherwise, or as soon as such a process exits.
        """
        procs = (
            []
            if process is None
            else (list(process) if isinstance(process, (list, tuple)) else [process])
        )

        def check():
            value = predicate()
            if value:
                return value
            for p in procs:
                if not p.is_running():
                    raise WaitTimeout(
                        f'{p.name} exited (code {p.returncode}) while '
                        f'waiting for {what}\n{p.describe()}'
                    )
            return None

        value = self.spin_until(check, timeout)
        if value:
            return value
        msg = f'timed out after {scaled(timeout):.1f} s waiting for {what}'
        for p in procs:
            msg += '\n' + p.describe()
        raise WaitTimeout(msg)

    # -- topics --
    def subscribe(self, msg_type, topic, qos=None):
        """Subscribe and collect every message: returns a MessageCollector."""
        if qos is None:
            qos = _qos()[0]
        collector = MessageCollector(topic)
        collector.subscription = self.node.create_subscription(msg_type, topic, collector, qos)
        return collector

    def publisher(self, msg_type, topic, qos=None):
        return self.node.create_publisher(msg_type, topic, _qos()[0] if qos is None else qos)

    def wait_for_message(self, collector, predicate=None, timeout=10.0, what=None, process=None):
        """Wait for a message (matching ``predicate``) on a collector; return it."""

        def check():
            for msg in reversed(collector.messages):
                if predicate is None or predicate(msg):
                    return msg
            return None

        return self.wait_for(
            check, timeout, what or f'a message on {collector.topic}', process=process
        )

    def publish_until(
        self,
        publisher,
        make_msg,
        predicate,
        timeout=10.0,
        period=0.1,
        what='a reaction to the published messages',
        process=None,
    ):
        """
        Publish ``make_msg()`` each ``period`` s until ``predicate()`` is truthy; return its value.

        It spins in between.  This survives DDS discovery delays: the first messages may be sent
        before the peer has matched.
        """
        state = {'next': 0.0, 'sent': 0}

        def step():
            value = predicate()
            if value:
                return value
            now = time.monotonic()
            if now >= state['next']:
                publisher.publish(make_msg())
                state['sent'] += 1
                state['next'] = now + period
            return None

        try:
            return self.wait_for(step, timeout, what, process=process)
        except WaitTimeout as exc:
            raise WaitTimeout(
                f'{exc}\n(published {state["sent"]} messages on '
                f'{publisher.topic_name}, {publisher.get_subscription_count()} '
                'matched subscriptions)'
            ) from None

    # -- graph --
    def topic_types(self):
        return dict(self.node.get_topic_names_and_types())

    def wait_for_topic(self, topic, timeout=10.0, msg_type=None, process=None):
        """
        Wait until ``topic`` (fully qualified) is in the ROS graph.

        With ``msg_type`` (e.g. "std_msgs/msg/String") among its types if given.
        """

        def check():
            types = self.topic_types().get(topic)
            return types is not None and (msg_type is None or msg_type in types)

        self.wait_for(
            check,
            timeout,
            f'topic {topic}' + (f' [{msg_type}]' if msg_type else ''),
            process=process,
        )

    def wait_for_publishers(self, topic, count=1, timeout=10.0, process=None):
        return self.wait_for(
            lambda: self.node.count_publishers(topic) >= count,
            timeout,
            f'{count} publisher(s) on {topic}',
            process=process,
        )

    def wait_for_subscribers(self, topic, count=1, timeout=10.0, process=None):
        return self.wait_for(
            lambda: self.node.count_subscribers(topic) >= count,
            timeout,
            f'{count} subscriber(s) on {topic}',
            process=process,
        )

    def wait_for_matched(self, publisher, count=1, timeout=10.0, process=None):
        """Wait until ``publisher`` has matched ``count`` subscriptions."""
        return self.wait_for(
            lambda: publisher.get_subscription_count() >= count,
            timeout,
            f'{count} subscription(s) matching {publisher.topic_name}',
            process=process,
        )

    def wait_for_writers(self, collectors, timeout=30.0, process=None, settle=1.0):
        """
        Wait until each collector's subscription has matched a publisher, then ``settle`` s more.

        The node's writer matches this new reader on its own time (DDS discovery: on a loaded
        machine later than this side matched it), and what it sends before is lost, so that a
        node answering each input once loses that answer: the second is for the other side.
        """
        self.wait_for(
            lambda: all(c.subscription.get_publisher_count() >= 1 for c in collectors),
            timeout,
            ', '.join(c.topic for c in collectors) + ' matched',
            process=process,
        )
        self.spin_for(settle)

    def wait_for_node(self, name, namespace='/', timeout=10.0, process=None):
        return self.wait_for(
            lambda: (name, namespace) in self.node.get_node_names_and_namespaces(),
            timeout,
            f'node {namespace.rstrip("/")}/{name}',
            process=process,
        )

    # -- services --
    def call(self, srv_type, service, request, timeout=10.0, process=None, idempotent=False):
        """
        Call a service (waiting for it first) and return the response.

        One client per service, kept for the node's life: a new client's first response can be
        lost (below), so each client risks it once, not each call.

        ``idempotent``: a request that may be sent twice (a query). It is sent again every 2 s
        until answered: the server answers a new client only once its response writer has matched
        the client's reader, and on a loaded machine that can come after the request (rmw: "failed
        to send response (timeout)"), the response then lost.
        """
        key = (srv_type, service)
        if key not in self._clients:
            self._clients[key] = self.node.create_client(srv_type, service)
        client = self._clients[key]
        self.wait_for(client.service_is_ready, timeout, f'service {service}', process=process)
        futures = [client.call_async(request)]
        resend = {'at': time.monotonic() + 2.0}

        def answered():
            done = next((f for f in futures if f.done()), None)
            if done is None and idempotent and time.monotonic() >= resend['at']:
                futures.append(client.call_async(request))
                resend['at'] = time.monotonic() + 2.0
            return done

        done = self.wait_for(answered, timeout, f'the response of {service}', process=process)
        return done.result()

    def set_parameter(self, node, name, value, timeout=10.0, process=None):
        """Set the parameter ``name`` of ``node`` (full name); return the SetParametersResult."""
        from rcl_interfaces.srv import SetParameters
        from rclpy.parameter import Parameter

        res = self.call(
            SetParameters,
            f'{node}/set_parameters',
            SetParameters.Request(parameters=[Parameter(name, value=value).to_parameter_msg()]),
            timeout=timeout,
            process=process,
        )
        return res.results[0]


#: the controller's log line on accepting a trajectory or pose goal: group 1 the goal's id, group 2
#: the control time [s] it starts at (its stamp, or its arrival if it came after its stamp)
TRAJECTORY_START = re.compile(r'accepted \(goal (\d+)\): starts at ([0-9.]+) s')


def trajectory_start(log, goal=None):
    """Return the start [s] the controller logged for goal ``goal`` (None: the first), or None."""
    for match in TRAJECTORY_START.finditer(log):
        if goal is None or int(match.group(1)) == goal:
            return float(match.group(2))
    return None


def json_payload(msg):
    """Decode the JSON of a std_msgs/String (None if it is not JSON)."""
    try:
        return json.loads(msg.data)
    except (ValueError, AttributeError):
        return None
