#!/usr/bin/env python3
"""
Benchmark: start-up, from launching a process to its first output (issue 21).

1. library: a fresh interpreter imports numpy and spart_ros (``spart_ros.core``, the fast path),
   builds the 7-DoF KUKA iiwa from URDF, creates FastDynamics and computes a first
   inverse_dynamics (the compiled kernels are an extension module built ahead of time: loading it
   is part of the import);
2. each node alone, with the same 7-DoF model (fixed base, gravity), started as the INSTALLED
   executable: from launching the process to its first output received here (dynamics_node:
   ``~/center_of_mass``; controller_node: the first effort command; sim_node: the first
   ``joint_states``); the dynamics node and the controller get joint states from this process
   at 200 Hz from before they start;
3. ``sim_demo.launch.py robot:=kuka_iiwa`` (the three nodes, run by scripts/local_launch.py):
   from launching it to the controller commanding (its first effort command) and to every node's
   first output.

Each is run ``--runs`` times (default 5) and the median printed, with the CPU seconds the
process(es) used until then (/proc, user + system).  Targets (issue 21, idle machine): a node
<= 1.0 s, the three-node launch up and commanding <= 3 s.  The load average is printed: on a
busy machine the figures are longer (compare with a baseline measured in the same run).

    source scripts/env.sh && export ROS_DOMAIN_ID=<yours>
    python benchmarks/bench_startup.py [--runs 5] [--only library,nodes,launch] [--baseline DIR]

``--baseline DIR``: another checkout of spart_ros, built (its ``install/``, e.g. an older commit
extracted with ``git archive`` and built with colcon in this environment), measured the same way
in alternation with this one (run k of each side back to back, the order flipped every run), so
both see the same machine load.
Not a test: the exit code is 0 either way.
"""

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
URDF = os.path.join(ROOT, 'urdf', 'kuka_iiwa.urdf')
JOINTS = [f'lbr_iiwa_joint_{k}' for k in range(1, 8)]


class Tree:
    """A built checkout: its installed executables, its installed package and its environment."""

    def __init__(self, root, label):
        self.root, self.label = root, label
        prefix = os.path.join(root, 'install', 'spart_ros')
        self.bin = os.path.join(prefix, 'lib', 'spart_ros')
        self.site = os.path.join(
            prefix, 'lib', f'python{sys.version_info[0]}.{sys.version_info[1]}', 'site-packages'
        )
        self.env = dict(os.environ)
        if root != ROOT:  # its package and share/ first
            self.env['PYTHONPATH'] = os.pathsep.join([self.site, os.environ.get('PYTHONPATH', '')])
            self.env['AMENT_PREFIX_PATH'] = os.pathsep.join(
                [prefix, os.environ.get('AMENT_PREFIX_PATH', '')]
            )


NODE_TARGET_S, LAUNCH_TARGET_S = 1.0, 3.0

LIBRARY = r"""
import time
t0 = time.perf_counter()
import sys, json
sys.path.insert(0, {root!r})
import numpy as np
from spart_ros.core.urdf import robot_from_urdf
from spart_ros.core.fast import FastDynamics
t1 = time.perf_counter()
robot, keys = robot_from_urdf({urdf!r})
fd = FastDynamics(robot, gravity=[0.0, 0.0, -9.81])
nq = robot.n_q
tau0, taum = fd.inverse_dynamics(np.eye(3), np.zeros(3), np.full(nq, 0.3), np.zeros(6),
                                 np.full(nq, 0.1), np.zeros(6), np.zeros(nq), floating=False)
t2 = time.perf_counter()
print(json.dumps(dict(imports=t1 - t0, first=t2 - t1, at=time.time(), numba='numba' in sys.modules,
                      cpu=time.process_time())))
"""


def cpu_seconds(pids):
    """User + system CPU seconds so far of the processes ``pids`` (those still alive)."""
    tick = os.sysconf('SC_CLK_TCK')
    total = 0.0
    for pid in pids:
        try:
            with open(f'/proc/{pid}/stat') as f:
                fields = f.read().rsplit(')', 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
        except (OSError, IndexError, ValueError):
            pass
    return total


def descendants(pid):
    """``pid`` and every process below it."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            with open(f'/proc/{p}/task/{p}/children') as f:
                todo.extend(int(c) for c in f.read().split())
        except OSError:
            pass
    return out


def library_runs(tree, runs):
    rows = []
    for _ in range(runs):
        launched = time.time()
        out = subprocess.run(
            [sys.executable, '-c', LIBRARY.format(root=tree.site, urdf=URDF)],
            capture_output=True,
            text=True,
            cwd='/',
            env=tree.env,
        )
        if out.returncode:
            raise SystemExit(out.stderr)
        d = json.loads(out.stdout.strip().splitlines()[-1])
        d['wall'] = d['at'] - launched
        rows.append(d)
    return rows


class Probe:
    """
    An rclpy node that publishes the KUKA's joint states.

    It records the first message seen on each watched topic after reset().
    """

    def __init__(self):
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
        from sensor_msgs.msg import JointState

        self.rclpy = rclpy
        rclpy.init()
        self.node = rclpy.create_node('startup_probe')
        qos = QoSProfile(
            history=HistoryPolicy.KEEP_LAST,
            depth=10,
            reliability=ReliabilityPolicy.RELIABLE,
            durability=DurabilityPolicy.VOLATILE,
        )
        self.best_effort = QoSProfile(
            history=HistoryPolicy.KEEP_LAST, depth=10, reliability=ReliabilityPolicy.BEST_EFFORT
        )
        self.first, self.publishing, self.JointState = {}, False, JointState
        self.pub = self.node.create_publisher(JointState, '/joint_states', qos)
        self.node.create_timer(0.005, self._publish)
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)
        self.thread = threading.Thread(target=self.executor.spin, daemon=True)
        self.thread.start()

    def watch(self, msg_type, topic):
        self.node.create_subscription(
            msg_type,
            topic,
            lambda msg, t=topic: self.first.setdefault(t, time.time()),
            self.best_effort,
        )

    def _publish(self):
        if self.publishing:
            msg = self.JointState(
                name=JOINTS, position=[0.1 * k for k in range(7)], velocity=[0.0] * 7
            )
            msg.header.stamp = self.node.get_clock().now().to_msg()
            self.pub.publish(msg)

    def reset(self, publishing):
        self.first, self.publishing = {}, publishing

    def wait(self, topics, timeout, processes):
        end = time.time() + timeout
        while time.time() < end:
            if all(t in self.first for t in topics):
                return True
            if any(p.poll() is not None for p in processes):
                return False
            time.sleep(0.002)
        return False

    def close(self):
        self.executor.shutdown()
        self.thread.join(5.0)
        self.node.destroy_node()
        self.rclpy.shutdown()


def stop(proc):
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def params_file(params):
    import yaml

    f = tempfile.NamedTemporaryFile('w', suffix='.yaml', delete=False)
    yaml.safe_dump({'/**': {'ros__parameters': params}}, f)
    f.close()
    return f.name


NODES = {  # executable: (parameters, the first output's topic, its type, joint states from here)
    'dynamics_node': (
        {'urdf_path': URDF, 'base': 'fixed', 'gravity': [0.0, 0.0, -9.81]},
        '/spart_dynamics/center_of_mass',
        'spart_interfaces.msg:CenterOfMass',
        True,
    ),
    'controller_node': (
        {
            'urdf_path': URDF,
            'base': 'fixed',
            'gravity': [0.0, 0.0, -9.81],
            'mode': 'computed_torque',
            'robot_description_topic': '',
            'command_joints': JOINTS,
            'commands_topic': '/effort_controller/commands',
        },
        '/effort_controller/commands',
        'std_msgs.msg:Float64MultiArray',
        True,
    ),
    'sim_node': (
        {
            'urdf_path': URDF,
            'base': 'fixed',
            'gravity': [0.0, 0.0, -9.81],
            'joint_states_topic': '/sim_joint_states',
        },
        '/sim_joint_states',
        'sensor_msgs.msg:JointState',
        False,
    ),
}


def msg_class(spec):
    import importlib

    module, name = spec.split(':')
    return getattr(importlib.import_module(module), name)


def node_run(probe, tree, name, log):
    params, topic, _, inputs = NODES[name]
    path = params_file(params)
    probe.reset(inputs)
    time.sleep(0.3 if inputs else 0.05)  # our joint states flowing before the node starts
    launched = time.time()
    proc = subprocess.Popen(
        [os.path.join(tree.bin, name), '--ros-args', '--params-file', path],
        stdout=log,
        stderr=subprocess.STDOUT,
        env=tree.env,
    )
    ok = probe.wait([topic], 30.0, [proc])
    cpu = cpu_seconds(descendants(proc.pid))
    stop(proc)
    os.unlink(path)
    return {'ok': ok, 'wall': probe.first.get(topic, float('nan')) - launched, 'cpu': cpu}


LAUNCH_TOPICS = {
    'controller': '/effort_controller/commands',
    'dynamics': '/spart_dynamics/center_of_mass',
    'sim': '/joint_states',
}


def launch_run(probe, tree, log):
    probe.reset(False)
    time.sleep(0.1)
    launched = time.time()
    proc = subprocess.Popen(
        [
            sys.executable,
            os.path.join(tree.root, 'scripts', 'local_launch.py'),
            'sim_demo.launch.py',
            'robot:=kuka_iiwa',
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env=tree.env,
    )
    ok = probe.wait(list(LAUNCH_TOPICS.values()), 60.0, [proc])
    cpu = cpu_seconds(descendants(proc.pid))
    row = dict(
        ok=ok,
        cpu=cpu,
        **{k: probe.first.get(t, float('nan')) - launched for k, t in LAUNCH_TOPICS.items()},
    )
    row['all'] = max(row[k] for k in LAUNCH_TOPICS)
    os.killpg(proc.pid, signal.SIGINT)
    try:
        proc.wait(15)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    time.sleep(0.5)
    return row


def alternating(trees, runs, fn):
    """
    {tree label: [fn(tree) per run]}, the trees' runs back to back.

    The order flipped every run.
    """
    rows = {t.label: [] for t in trees}
    for k in range(runs):
        for tree in trees if k % 2 == 0 else trees[::-1]:
            rows[tree.label].append(fn(tree))
    return rows


def med(rows, key):
    return statistics.median(r[key] for r in rows)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument(
        '--runs', type=int, default=5, help='runs of each measurement (default 5; medians printed)'
    )
    ap.add_argument('--only', default='library,nodes,launch', help='comma-separated parts to run')
    ap.add_argument(
        '--baseline', help='another built checkout, measured in alternation with this one'
    )
    args = ap.parse_args(argv)
    parts = set(args.only.split(','))
    trees = [Tree(ROOT, 'this')] + (
        [Tree(os.path.abspath(args.baseline), 'baseline')] if args.baseline else []
    )
    print(
        f'python {sys.version.split()[0]}; 2 CPUs shared; load average '
        f'{" ".join(f"{x:.2f}" for x in os.getloadavg())}; '
        f'ROS_DOMAIN_ID={os.environ.get("ROS_DOMAIN_ID")}; model {os.path.relpath(URDF, ROOT)} (7 '
        'joints)'
        + (f'; baseline {trees[1].root}' if args.baseline else '')
    )
    if 'library' in parts:
        rows = alternating(trees, args.runs, lambda tree: library_runs(tree, 1)[0])
        print(
            f'\n1. library (fresh interpreter, median of {args.runs}): process start -> first '
            'inverse_dynamics'
        )
        for label, r in rows.items():
            print(
                f'   {label:<9} {med(r, "wall"):.2f} s (imports {med(r, "imports"):.2f} s, URDF + '
                f'FastDynamics + first call {med(r, "first") * 1e3:.0f} ms), CPU '
                f'{med(r, "cpu"):.2f} s; numba imported: {any(x["numba"] for x in r)}'
            )
    if parts & {'nodes', 'launch'}:
        probe = Probe()
        for name, (_, topic, spec, _) in NODES.items():
            probe.watch(msg_class(spec), topic)
        probe.watch(msg_class('sensor_msgs.msg:JointState'), '/joint_states')
        with open(os.devnull, 'w') as log:
            if 'nodes' in parts:
                print(
                    f'\n2. each node alone (installed executable; median of {args.runs}): process '
                    f'start -> first output, target <= {NODE_TARGET_S} s'
                )
                for name in NODES:
                    rows = alternating(
                        trees, args.runs, lambda tree: node_run(probe, tree, name, log)
                    )
                    for label, r in rows.items():
                        failed = sum(not x['ok'] for x in r)
                        wall = med(r, 'wall')
                        each = ', '.join('%.2f' % x['wall'] for x in r)
                        print(
                            f'   {name:<16} {label:<9} {wall:5.2f} s  (runs: {each}; CPU '
                            f'{med(r, "cpu"):.2f} s)'
                            f'{"  %d run(s) without output" % failed if failed else ""}  '
                            f'{"PASS" if wall <= NODE_TARGET_S else "over"}',
                            flush=True,
                        )
            if 'launch' in parts:
                rows = alternating(trees, args.runs, lambda tree: launch_run(probe, tree, log))
                print(
                    f'\n3. sim_demo.launch.py robot:=kuka_iiwa (3 nodes; median of {args.runs}), '
                    f'target up and commanding <= {LAUNCH_TARGET_S} s:'
                )
                for label, r in rows.items():
                    each = ', '.join('%.2f' % x['all'] for x in r)
                    print(
                        f'   {label:<9} controller commanding {med(r, "controller"):.2f} s, '
                        f'dynamics first output {med(r, "dynamics"):.2f} s, sim first '
                        f'joint_states {med(r, "sim"):.2f} s; all three {med(r, "all"):.2f} s '
                        f'(runs: {each}); CPU of the launch and its nodes until then '
                        f'{med(r, "cpu"):.2f} s  '
                        f'{"PASS" if med(r, "all") <= LAUNCH_TARGET_S else "over"}',
                        flush=True,
                    )
        probe.close()
    print(f'\nload average now {" ".join(f"{x:.2f}" for x in os.getloadavg())}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
