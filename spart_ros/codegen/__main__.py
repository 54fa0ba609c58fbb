"""
Command line of the code generator.

    python -m spart_ros.codegen robot.urdf --quantities H,ID --out DIR [--language python|c|all]

Writes DIR/<name>.py (numpy; numba-jitted when installed) and/or DIR/<name>.c + <name>.h
for a fixed-base model (or SPART's floating base with --base floating), and prints what it
generated (operations per function, sizes, time).  The model is a URDF or xacro file, or
SPART DH data (.json / .yaml).  Exit status 0 on success, 1 when the model or the request
cannot be served (one line saying why), 2 for a bad command line.
"""

import argparse
import sys
import time
import warnings

import numpy as np

from .generator import DEFAULT_QUANTITIES, generate, MAX_OPERATIONS, MAX_SECONDS
from ..core.errors import SpartError
from ..core.packages import add_package_path_option, use_package_path_option


def _numbers(parser, option, text, n):
    try:
        values = [float(x) for x in text.replace(',', ' ').split()]
    except ValueError:
        values = []
    if len(values) != n or not np.all(np.isfinite(values)):
        parser.error(f'{option} {text!r}: expected {n} numbers separated by commas')
    return values


def _arguments(argv):
    parser = argparse.ArgumentParser(
        prog='python -m spart_ros.codegen', description=__doc__.split('\n\n')[0]
    )
    parser.add_argument('model', help='URDF or xacro file, or SPART DH data (.json, .yaml)')
    parser.add_argument(
        '--quantities',
        default=','.join(DEFAULT_QUANTITIES),
        help='comma-separated: H, C, bias, g, ID, FD, J:<link>, pose:<link> (a link name or SPART '
        'id; @x,y,z = a point from the link CoM, in the link CoM frame) (default %(default)s)',
    )
    parser.add_argument('--out', required=True, help='output directory (created if needed)')
    parser.add_argument('--language', choices=('python', 'c', 'all'), default='python')
    parser.add_argument('--name', help='module / file name and C prefix (default: the robot name)')
    parser.add_argument(
        '--base',
        choices=('fixed', 'floating'),
        default='fixed',
        help="fixed (default), or SPART's floating base: R0, r0, u0 become inputs, u = [u0; qd]",
    )
    parser.add_argument(
        '--gravity',
        help='m/s^2 in the inertial frame (default 0,0,-9.81 on a fixed base, 0,0,0 '
        'on a floating one)',
    )
    parser.add_argument(
        '--base-xyz',
        default='0,0,0',
        help='fixed base: URDF base link position in the inertial '
        'frame (default: the URDF world joint, or 0)',
    )
    parser.add_argument(
        '--base-rpy', default='0,0,0', help='fixed base: URDF base link roll, pitch, yaw (rad)'
    )
    parser.add_argument(
        '--no-jit', action='store_true', help='Python: never numba-jit (numpy only)'
    )
    parser.add_argument(
        '--compile',
        action='store_true',
        help='C: compile the source with the system C compiler (a check; writes lib<name>.so)',
    )
    parser.add_argument(
        '--max-operations',
        type=int,
        default=MAX_OPERATIONS,
        help='largest function allowed, in scalar operations (default %(default)s)',
    )
    parser.add_argument(
        '--max-seconds',
        type=float,
        default=MAX_SECONDS,
        help='longest build of one function allowed, seconds (default %(default)s)',
    )
    parser.add_argument(
        '--xacro-arg',
        action='append',
        default=[],
        metavar='NAME:=VALUE',
        help='a xacro argument (repeatable)',
    )
    add_package_path_option(parser)
    args = parser.parse_args(argv)
    use_package_path_option(parser, args)
    if args.gravity is not None:
        args.gravity = _numbers(parser, '--gravity', args.gravity, 3)
    xyz = _numbers(parser, '--base-xyz', args.base_xyz, 3)
    rpy = _numbers(parser, '--base-rpy', args.base_rpy, 3)
    args.base_pose = None
    if (any(xyz) or any(rpy)) and args.base == 'floating':
        parser.error('--base-xyz/--base-rpy: a floating base takes its pose at run time')
    if any(xyz) or any(rpy):
        from ..core.attitude import rpy_rotation

        T = np.eye(4)
        T[:3, :3], T[:3, 3] = rpy_rotation(rpy), xyz
        args.base_pose = T
    args.xacro = {}
    for item in args.xacro_arg:
        name, sep, value = item.partition(':=')
        if not sep or not name:
            parser.error(f'--xacro-arg {item!r}: expected NAME:=VALUE')
        args.xacro[name] = value
    return args


def main(argv=None):
    args = _arguments(argv)
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        try:
            code = generate(
                args.model,
                args.quantities,
                args.language,
                name=args.name,
                base=args.base,
                base_pose=args.base_pose,
                gravity=args.gravity,
                jit=not args.no_jit,
                max_operations=args.max_operations,
                max_seconds=args.max_seconds,
                xacro_args=args.xacro,
            )
            paths = code.write(args.out)
            library = None
            if args.compile and any(p.endswith('.c') for p in paths):
                from .build import compile_c

                library = compile_c(next(p for p in paths if p.endswith('.c')))
        except (SpartError, OSError) as err:
            for w in caught:
                print(f'warning: {w.message}', file=sys.stderr)
            print(f'ERROR: {type(err).__name__}: {err}', file=sys.stderr)
            return 1
    for w in caught:
        print(f'warning: {w.message}', file=sys.stderr)
    print(code.summary())
    for p in paths + ([library] if library else []):
        print(f'wrote {p}')
    print(f'done in {time.perf_counter() - start:.2f} s')
    return 0


if __name__ == '__main__':
    sys.exit(main())
