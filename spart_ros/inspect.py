"""
Model report of a URDF, in the spirit of urdfdom's ``check_urdf``.

    python -m spart_ros.inspect robot.urdf [--base floating|fixed] [--strict] [--xacro-arg
    name:=value]
                                           [--workspace LINK [--point X Y Z] [--samples N] [--seed
                                           S]
                                            [--output FILE.png]]

Prints what spart_ros makes of the file: the kinematic tree, the joints (type, axis,
limits, mimic), the links (mass, CoM, inertia), the total mass and centre of mass at the
zero configuration, every warning, and what the model supports (kinematics, inverse and
forward dynamics on a fixed or floating base).  Exit status: 0 when the model loads (and,
with ``--base``, forward dynamics works on that base); 1 when it does not (the report
says why); 2 for a bad command line.  ``--strict`` makes non-physical inertias errors.

``--orbit-altitude M`` (or ``--orbit-mean-motion RAD_S``, ``--orbit-mu``): the orbit the robot
would fly (docs/space_environment.md) and what it means for it at the zero configuration, taken
as one rigid body: its principal moments about the centre of mass, the largest gravity-gradient
torque 3/2 n^2 (I3 - I1), and the small pitch libration period about the gravity-gradient stable
attitude (least inertia radial, greatest along the orbit normal).

``--workspace LINK``: the points the link (``--point``: a point in its URDF frame) reaches with
its joints anywhere within their limits, by Monte Carlo (``--samples``, default 20000;
``spart_ros.core.sample_workspace``), base link frame fixed at the origin: prints the sample
count and the bounding box, and writes a PNG of the points in three views (top x-y, front x-z,
side y-z; default ``<robot>_workspace_<link>.png``).
"""

import argparse
import sys
import warnings

import numpy as np

from .core.errors import SpartError
from .core.invertibility import singularity
from .core.model import FIXED, JOINT_TYPE_NAMES, PRISMATIC
from .core.packages import add_package_path_option, use_package_path_option
from .core.urdf import robot_from_urdf


def _f(x):
    return f'{float(x):.6g}'


def _vec(v, tiny=0.0):
    """(x, y, z); entries below ``tiny`` in magnitude shown as 0 (rounding in rpy, origins)."""
    return '(' + ', '.join(_f(0.0 if abs(x) <= tiny else x + 0.0) for x in v) + ')'


def _pose(T):
    return f'xyz {_vec(T[:3, 3], 1e-12)} rpy {_vec(_rpy(T[:3, :3]), 1e-12)}'


def _rpy(R):
    """URDF roll, pitch, yaw of a rotation (R = Rz(yaw) Ry(pitch) Rx(roll))."""
    pitch = np.arcsin(-np.clip(R[2, 0], -1.0, 1.0))
    return np.array([np.arctan2(R[2, 1], R[2, 2]), pitch, np.arctan2(R[1, 0], R[0, 0])])


def _urdf_frames(robot):
    """{link name: 4x4 URDF link frame in the base link frame} at the zero configuration."""
    frames = {robot.base_link.name: np.eye(4)}
    com = {0: np.asarray(robot.base_link.T, float)}  # CoM frames in the base link frame
    for joint, link in zip(robot.joints, robot.links):
        T_joint = com[joint.parent_link] @ np.asarray(joint.T, float)
        frames[link.name] = T_joint
        com[link.id] = T_joint @ np.asarray(link.T, float)
    return frames, com


def _limits(joint):
    lim, unit = joint.limits, 'm' if joint.type == PRISMATIC else 'rad'
    parts = []
    if np.isfinite(lim.lower) or np.isfinite(lim.upper):
        parts.append(f'[{_f(lim.lower)}, {_f(lim.upper)}] {unit}')
    if np.isfinite(lim.effort):
        parts.append(f'effort {_f(lim.effort)}')
    if np.isfinite(lim.velocity):
        parts.append(f'velocity {_f(lim.velocity)}')
    return ', '.join(parts) or 'no limits'


def _tree_lines(robot):
    """Return the kinematic tree, one line per link, indented by depth."""
    children = {0: []}
    for joint in robot.joints:
        children.setdefault(joint.parent_link, []).append(joint)
        children.setdefault(joint.child_link, [])
    names = robot.link_names
    lines = [f'  {names[0]} (base)']

    def walk(link_id, indent):
        kids = children[link_id]
        for k, joint in enumerate(kids):
            last = k == len(kids) - 1
            kind = JOINT_TYPE_NAMES[joint.type]
            mimic = robot.mimic.get(joint.name)
            tag = f', mimics {mimic.leader!r}' if mimic else ''
            lines.append(
                f'  {indent}{"`-- " if last else "|-- "}{names[joint.child_link]}  '
                f'<- {joint.name} ({kind}{tag})'
            )
            walk(joint.child_link, indent + ('    ' if last else '|   '))

    walk(0, '')
    return lines


def _support(robot, floating, base_only=False, independent=False):
    why = singularity(robot, floating, base_only, independent)
    return ('yes', True) if not why else (f'no: {why}', False)


def orbit_lines(robot, orbit):
    """
    Return the report's lines on ``orbit`` (a CircularOrbit) for ``robot`` at zero joint angles.

    The robot as one rigid body: inertia about its CoM (parallel axis theorem over the bodies),
    the largest gravity-gradient torque, the small pitch libration period.
    """
    bodies = [robot.base_link] + list(robot.links)
    _, com = _urdf_frames(robot)
    total = float(robot.total_mass)
    lines = ['', f'orbit: {orbit.describe()}']
    if total <= 0:
        return lines + ['  the robot has no mass']
    c = sum(float(b.mass) * com[k][:3, 3] for k, b in enumerate(bodies)) / total
    inertia = np.zeros((3, 3))
    for k, b in enumerate(bodies):
        R, d = com[k][:3, :3], com[k][:3, 3] - c
        inertia += R @ np.asarray(b.inertia, dtype=float) @ R.T
        inertia += float(b.mass) * (d @ d * np.eye(3) - np.outer(d, d))
    moments = np.linalg.eigvalsh(inertia)
    n = orbit.mean_motion
    lines += [
        f'  the robot at the zero configuration as one rigid body: principal moments about its '
        f'centre of mass {_vec(moments)} kg m^2',
        f'  gravity-gradient torque: at most 3/2 n^2 (I3 - I1) = '
        f'{_f(1.5 * n * n * (moments[2] - moments[0]))} N m',
    ]
    if moments[1] > moments[0] and moments[2] > 0:
        period = 2 * np.pi / (n * np.sqrt(3 * (moments[1] - moments[0]) / moments[2]))
        lines.append(
            '  small pitch libration (least inertia radial, greatest along the orbit normal): '
            f'period {_f(period)} s ({_f(period / orbit.period)} orbits)'
        )
    return lines


def report(robot, base=None, caught=(), orbit=None):
    """
    (text, ok): the report of a loaded robot.

    ``ok`` False when ``base`` is given and forward dynamics does not work on that base.
    ``orbit``: a :class:`~spart_ros.core.orbit.CircularOrbit`: its lines (:func:`orbit_lines`).
    """
    out = [
        f'robot {robot.name!r}: {robot.n_links_joints + 1} links, {len(robot.joints)} joints '
        f'({robot.n_q} moving), base link {robot.base_link.name!r}'
    ]
    if robot.world_link is not None:
        if robot.base_hint == 'fixed':
            T = robot.base_pose
            out.append(
                f'URDF root {robot.world_link!r} dropped: a fixed joint places the base at '
                f'{_pose(T)} in {robot.world_link!r} (the URDF implies a fixed base)'
            )
        else:
            out.append(
                f'URDF root {robot.world_link!r} dropped: a floating joint makes '
                f'{robot.base_link.name!r} a floating base (the URDF implies a floating base)'
            )
    elif robot.base_hint == 'fixed':
        out.append(f'URDF root {robot.base_link.name!r}: the URDF implies a fixed base')
    out += ['', 'tree:'] + _tree_lines(robot)

    out += ['', 'joints (axis in the joint frame; origin = joint frame in the parent link frame):']
    frames, com = _urdf_frames(robot)
    for joint in robot.joints:
        kind = JOINT_TYPE_NAMES[joint.type]
        T = (
            np.linalg.inv(frames[robot.link_names[joint.parent_link]])
            @ frames[robot.link_names[joint.child_link]]
        )
        line = (
            f'  {joint.name}: {kind} {robot.link_names[joint.parent_link]} -> '
            f'{robot.link_names[joint.child_link]}, origin {_pose(T)}'
        )
        if joint.type != FIXED:
            line += f', axis {_vec(joint.axis)}, {_limits(joint)}'
            m = robot.mimic.get(joint.name)
            if m is not None:
                line += f', mimic: {_f(m.multiplier)} * {m.leader} + {_f(m.offset)}'
        out.append(line)

    out += ['', 'links (CoM in the link frame; inertia about the CoM, in the <inertial> frame):']
    bodies = [robot.base_link] + robot.links
    for body in bodies:
        T = np.asarray(body.T, float)
        J = np.asarray(body.inertia, float)
        if float(body.mass) == 0 and not J.any():
            out.append(f'  {body.name}: massless frame')
            continue
        out.append(
            f'  {body.name}: mass {_f(body.mass)} kg, CoM {_vec(T[:3, 3], 1e-12)}, '
            f'inertia ixx {_f(J[0, 0])} iyy {_f(J[1, 1])} izz {_f(J[2, 2])} '
            f'ixy {_f(J[0, 1])} ixz {_f(J[0, 2])} iyz {_f(J[1, 2])}, '
            f'principal moments {_vec(np.linalg.eigvalsh(J))}'
        )

    total = float(robot.total_mass)
    out += ['', f'total mass: {_f(total)} kg']
    if total > 0:
        c = sum(float(b.mass) * com[k][:3, 3] for k, b in enumerate(bodies)) / total
        out.append(f'centre of mass at the zero configuration: {_vec(c)} m in the base link frame')

    out += [
        '',
        'supports:',
        '  kinematics, Jacobians, inverse dynamics (fixed and floating base): yes',
    ]
    fixed_fd, fixed_ok = _support(robot, False)
    floating_fd, floating_ok = _support(robot, True)
    floating_id, _ = _support(robot, True, base_only=True)
    out += [
        f'  forward dynamics, fixed base: {fixed_fd}',
        f'  forward dynamics, floating base: {floating_fd}',
        f'  floating-base inverse dynamics (base unactuated): {floating_id}',
    ]
    if robot.mimic:
        c = robot.coordinates
        out.append(
            f'  mimic joints {list(robot.mimic)}: SPART functions use the {c.n_full} joint '
            f'variables {c.full_names}; the fast path (spart_ros.core.fast.mimic) the {c.n} '
            f'independent {c.names}'
        )
        fixed_fd, fixed_ok = _support(robot, False, independent=True)
        floating_fd, floating_ok = _support(robot, True, independent=True)
        out += [
            f'  forward dynamics in independent coordinates, fixed base: {fixed_fd}',
            f'  forward dynamics in independent coordinates, floating base: {floating_fd}',
        ]

    if orbit is not None:
        out += orbit_lines(robot, orbit)

    out += (
        ['', f'warnings ({len(caught)}):'] + [f'  {w}' for w in caught]
        if caught
        else ['', 'warnings: none']
    )
    ok = True
    if base is not None:
        ok = floating_ok if base == 'floating' else fixed_ok
        out += [
            '',
            f'--base {base}: '
            + ('OK' if ok else 'ERROR: forward dynamics does not work on this base'),
        ]
    return '\n'.join(out), ok


def _arguments(argv):
    parser = argparse.ArgumentParser(
        prog='python -m spart_ros.inspect', description=__doc__.split('\n\n')[0]
    )
    parser.add_argument('urdf', help='URDF or xacro file (or - for URDF text on stdin)')
    parser.add_argument(
        '--base',
        choices=('fixed', 'floating'),
        help='the base you will use: exit 1 if forward dynamics does not work on it',
    )
    parser.add_argument(
        '--strict', action='store_true', help='non-physical inertias are errors, not warnings'
    )
    parser.add_argument(
        '--xacro-arg',
        action='append',
        default=[],
        metavar='NAME:=VALUE',
        help='a xacro argument (repeatable)',
    )
    add_package_path_option(parser)
    parser.add_argument(
        '--workspace',
        metavar='LINK',
        help='sample the joint space within the limits and plot the points LINK reaches (PNG)',
    )
    parser.add_argument(
        '--point',
        nargs=3,
        type=float,
        metavar=('X', 'Y', 'Z'),
        help="--workspace: a point in the link's URDF frame (default its origin)",
    )
    parser.add_argument(
        '--samples',
        type=int,
        default=20000,
        help='--workspace: joint-space samples (default 20000)',
    )
    parser.add_argument('--seed', type=int, default=0, help='--workspace: random seed (default 0)')
    parser.add_argument(
        '--orbit-altitude',
        type=float,
        metavar='M',
        help='report on a circular orbit this high [m]',
    )
    parser.add_argument(
        '--orbit-mean-motion', type=float, metavar='RAD_S', help='or of this mean motion [rad/s]'
    )
    parser.add_argument(
        '--orbit-mu',
        type=float,
        metavar='M3_S2',
        help="the central body's gravitational parameter (default: the Earth's)",
    )
    parser.add_argument(
        '--output',
        metavar='FILE.png',
        help='--workspace: the PNG (default <robot>_workspace_<link>.png)',
    )
    args = parser.parse_args(argv)
    if args.workspace is None and (args.point or args.output):
        parser.error('--point and --output go with --workspace LINK')
    if args.samples < 1:
        parser.error(f'--samples: expected at least 1, got {args.samples}')
    mappings = {}
    for item in args.xacro_arg:
        name, sep, value = item.partition(':=')
        if not sep or not name:
            parser.error(f'--xacro-arg {item!r}: expected NAME:=VALUE')
        mappings[name] = value
    use_package_path_option(parser, args)
    return args, mappings


def _interval(lo, hi):
    return f'[{_f(lo)}, {_f(hi)}]'


def workspace_report(robot, link, samples, point=None, seed=0, output=None):
    """
    (text, path): sample the workspace of ``link`` (see the module docstring).

    Write the PNG to ``output`` (default ``<robot>_workspace_<link>.png``) and say what was done.
    """
    from .core.workspace import sample_workspace

    link_name = (
        robot.link_names[robot.link_index(link)]
        if isinstance(link, str)
        else robot.link_names[link]
    )
    ws = sample_workspace(robot, link, samples, point=point, seed=seed)
    path = output or f'{robot.name}_workspace_{link_name}.png'
    _plot_workspace(
        ws.points,
        f'{robot.name}: workspace of {link_name}'
        + (f' (point {_vec(point)})' if point is not None else '')
        + f', {samples} samples',
        path,
    )
    lo, hi = ws.points.min(axis=0), ws.points.max(axis=0)
    where = (
        f'point {_vec(point)} of {link_name!r}'
        if point is not None
        else f'origin of {link_name!r}'
    )
    unbounded = [
        name
        for name, a, b in zip(robot.coordinates.names, *position_limits_of(robot))
        if not a < b
    ]
    lines = [
        '',
        f'workspace of the {where}: {samples} samples of the joint space within the position '
        f'limits (seed {seed}), base link frame fixed at the origin',
        f'  bounding box [m]: x {_interval(lo[0], hi[0])}, y {_interval(lo[1], hi[1])}, '
        f'z {_interval(lo[2], hi[2])}',
        f'  farthest from the base link origin: {_f(np.linalg.norm(ws.points, axis=1).max())} m',
        f'  plot (top x-y, front x-z, side y-z): {path}',
    ]
    if unbounded:
        lines.insert(
            2,
            f'  joints without position limits, drawn in [-pi, pi] rad or [-1, 1] m: {unbounded}',
        )
    return '\n'.join(lines), path


def position_limits_of(robot):
    from .core.inverse_kinematics import position_limits

    return position_limits(robot)


def _plot_workspace(points, title, path):
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 5.2))
    for ax, (i, j), name in zip(
        axes, ((0, 1), (0, 2), (1, 2)), ('top (x-y)', 'front (x-z)', 'side (y-z)')
    ):
        ax.scatter(points[:, i], points[:, j], s=0.6, alpha=0.35, color='tab:blue', linewidths=0)
        ax.plot([0.0], [0.0], marker='+', color='k', markersize=12)
        ax.set_xlabel('xyz'[i] + ' [m]')
        ax.set_ylabel('xyz'[j] + ' [m]')
        ax.set_title(name)
        ax.set_aspect('equal', adjustable='datalim')
        ax.grid(True, alpha=0.3)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _orbit(args):
    from .core.orbit import CircularOrbit, EARTH_MU

    if args.orbit_altitude is None and args.orbit_mean_motion is None:
        return None
    return CircularOrbit.make(
        altitude=args.orbit_altitude,
        mean_motion=args.orbit_mean_motion,
        mu=EARTH_MU if args.orbit_mu is None else args.orbit_mu,
    )


def main(argv=None):
    args, mappings = _arguments(argv)
    source = sys.stdin.read() if args.urdf == '-' else args.urdf
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        try:
            robot, _ = robot_from_urdf(source, strict=args.strict, xacro_args=mappings)
        except SpartError as err:
            for w in caught:
                print(f'warning: {w.message}')
            print(f'ERROR: {type(err).__name__}: {err}')
            return 1
        try:
            orbit = _orbit(args)
        except SpartError as err:
            print(f'ERROR: {err}')
            return 2
        text, ok = report(robot, args.base, [str(w.message) for w in caught], orbit)
    print(text)
    if args.workspace is not None:
        if args.workspace not in robot.keys.link_id:
            print(
                f'ERROR: --workspace: unknown link {args.workspace!r}; links are '
                f'{robot.link_names}'
            )
            return 2
        try:
            text, _ = workspace_report(
                robot, args.workspace, args.samples, args.point, args.seed, args.output
            )
        except (SpartError, OSError) as err:
            print(f'ERROR: --workspace: {type(err).__name__}: {err}')
            return 1
        print(text)
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
