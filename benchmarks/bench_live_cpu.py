"""
The live orbital main job's CPU per published state, process by process, from /proc.

Runs ``scripts/sim_demo.py --scenarios SC_3DoF_orbit`` of a tree (``--tree``, default this one;
another tree's own ``.venv`` and ``install/`` are used) and reads utime + stime of the demo
(its recorder and monitor) and of every node it launches at the demo's first and last progress
lines ("sim time ..." once a wall second, during the run only: the start-up and the summaries
are left out).  Over that window: each process's CPU seconds per wall second and milliseconds of
CPU per published state (the states published = the run's ``states_per_second`` x the simulated
seconds of the window), the load average and the other processes' cores (/proc/stat's busy time
minus the job's); then the demo's own figures (states published, lost, command latency).

    .venv/bin/python benchmarks/bench_live_cpu.py [--tree DIR] [--seconds 10] [--rounds 1]

Several trees (``--tree A --tree B``) run one after the other, alternating per round, so that
they are compared in the same minutes.  ROS_DOMAIN_ID is taken from the environment.
"""

import argparse
import json
import os
from pathlib import Path
import re
import subprocess
import sys
import tempfile
import time

ROOT = Path(__file__).resolve().parent.parent
HZ = os.sysconf('SC_CLK_TCK')
#: process label by a word of its command line (the demo's own process is 'demo')
LABELS = (('sim_node', 'sim'), ('controller_node', 'controller'), ('dynamics_node', 'dynamics'))
PROGRESS = re.compile(r'\[demo\]\s+sim time\s+([0-9.]+) s')


def _stat(pid):
    """Return (ppid, utime + stime in s) of a process, or None."""
    try:
        with open(f'/proc/{pid}/stat') as f:
            fields = f.read().rsplit(')', 1)[1].split()
    except OSError:
        return None
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / HZ


def _label(pid):
    try:
        with open(f'/proc/{pid}/cmdline', 'rb') as f:
            cmd = f.read().replace(b'\0', b' ').decode(errors='replace')
    except OSError:
        return None
    for word, label in LABELS:
        if word in cmd:
            return label
    return 'launcher' if 'local_launch' in cmd else 'other'


def _busy():
    with open('/proc/stat') as f:
        cpu = [int(x) for x in f.readline().split()[1:]]
    return (sum(cpu) - cpu[3] - cpu[4]) / HZ


def snapshot(root):
    """Return ({label: CPU s} of ``root`` and its descendants, the machine's busy CPU s)."""
    stats = {}
    for entry in os.listdir('/proc'):
        if entry.isdigit():
            s = _stat(int(entry))
            if s is not None:
                stats[int(entry)] = s
    family, changed = {root}, True
    while changed:
        changed = False
        for pid, (ppid, _) in stats.items():
            if ppid in family and pid not in family:
                family.add(pid)
                changed = True
    cpu = {}
    for pid in family:
        if pid in stats:
            label = 'demo' if pid == root else _label(pid)
            cpu[label] = cpu.get(label, 0.0) + stats[pid][1]
    return cpu, _busy()


def run(tree, seconds, domain):
    """Run the orbital demo of ``tree``; return its figures (a dict)."""
    out = Path(tempfile.mkdtemp(prefix='live_cpu_'))
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain), PYTHONUNBUFFERED='1')
    cmd = (
        f'source {tree}/scripts/env.sh >/dev/null && exec python {tree}/scripts/sim_demo.py '
        f'--scenarios SC_3DoF_orbit --orbit-seconds {seconds:g} --output {out}'
    )
    proc = subprocess.Popen(
        ['bash', '-c', cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
    )
    first = last = None
    lines = []
    for line in proc.stdout:
        lines.append(line)
        m = PROGRESS.search(line)
        if m:
            sample = (float(m.group(1)), time.monotonic(), *snapshot(proc.pid), os.getloadavg())
            first = first or sample
            last = sample
    code = proc.wait()
    summary = json.loads((out / 'summary.json').read_text()) if code in (0, 1) else None
    if summary is None or not summary['results'] or first is None or first is last:
        sys.stdout.write(''.join(lines[-30:]))
        raise RuntimeError(f'the demo of {tree} gave no run to measure (exit code {code})')
    r = summary['results'][0]
    sim_s, wall_s = last[0] - first[0], last[1] - first[1]
    states = r['states_per_second']['per_simulated_second'] * sim_s
    cpu = {k: last[2].get(k, 0.0) - first[2].get(k, 0.0) for k in last[2]}
    ours = sum(cpu.values())
    return {
        'tree': str(tree),
        'window_wall_s': wall_s,
        'window_sim_s': sim_s,
        'states': states,
        'cores': {k: v / wall_s for k, v in cpu.items()},
        'ms_per_state': {k: 1e3 * v / states for k, v in cpu.items()},
        'ms_per_state_total': 1e3 * ours / states,
        'other_cores': max(last[3] - first[3] - ours, 0.0) / wall_s,
        'load': (first[4][0], last[4][0]),
        'fraction_published': r['states_per_second']['fraction'],
        'lost': r.get('lost_states'),
        'latency_ms': r.get('latency_ms'),
        'failures': summary['failures'],
    }


def show(m):
    """Print one run's figures."""
    order = ['sim', 'controller', 'dynamics', 'demo', 'launcher', 'other']
    keys = [k for k in order if k in m['cores']]
    lat = m['latency_ms'] or {}
    print(
        f'{m["tree"]}: {m["window_sim_s"]:.1f} sim s in {m["window_wall_s"]:.1f} wall s, '
        f'{m["fraction_published"] * 100:.1f} % of the states published, latency p50 '
        f'{lat.get("p50", float("nan")):.2f} p99 {lat.get("p99", float("nan")):.2f} ms; load '
        f'{m["load"][0]:.2f}-{m["load"][1]:.2f}, other processes {m["other_cores"]:.2f} cores'
        + (f'; FAILED {m["failures"]}' if m['failures'] else '')
    )
    print('  ' + '  '.join(f'{k} {m["cores"][k]:.3f}' for k in keys) + '  (CPU s per wall s)')
    print(
        '  '
        + '  '.join(f'{k} {m["ms_per_state"][k]:.3f}' for k in keys)
        + f'  total {m["ms_per_state_total"]:.3f}  (ms of CPU per published state)'
    )


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument('--tree', action='append', type=Path, help='a tree (default: this one)')
    ap.add_argument('--seconds', type=float, default=10.0, help='simulated seconds of each run')
    ap.add_argument('--rounds', type=int, default=1)
    ap.add_argument('--json', type=Path, help="write every run's figures here")
    args = ap.parse_args(argv)
    trees = [t.resolve() for t in (args.tree or [ROOT])]
    domain = int(os.environ.get('ROS_DOMAIN_ID', '0'))
    runs = []
    for _ in range(args.rounds):
        for tree in trees:
            m = run(tree, args.seconds, domain)
            show(m)
            runs.append(m)
    if args.json:
        args.json.write_text(json.dumps(runs, indent=2))
    return 0


if __name__ == '__main__':
    sys.exit(main())
