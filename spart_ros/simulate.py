r"""
Offline closed loop from the command line: ``python -m spart_ros.simulate``.

Runs the controller of ``spart_controller`` on the embedded MuJoCo plant (or the core's own
forward dynamics with RK4) without ROS, faster than real time, and prints the tracking error
and the CPU time it took (:func:`spart_ros.sim.closed_loop.simulate`)::

    python -m spart_ros.simulate --demo kuka_iiwa [--plant rk4] [--output DIR]
    python -m spart_ros.simulate urdf/kuka_iiwa.urdf --params config/controller_kuka_iiwa.yaml \
        --gravity 0 0 -9.81 --waypoint 1.5 0.4 0.3 -0.3 -0.4 0.3 0.4 -0.3 --waypoint 3.0 0 0 0 0 0
        0 0

``--orbit-altitude M`` (or ``--orbit-mean-motion RAD_S``; ``--orbit-mu``, ``--orbit-model
linear|nonlinear``): the robot on a circular orbit (floating base, gravity zero by default),
every body under the orbit's tidal force and gravity-gradient torque, the base state and the
plots in the LVLH frame (Hill's axes: x radial, y along-track, z orbit normal; see
docs/space_environment.md).

``--actuators FILE``: the base's reaction wheels and thrusters (YAML, docs/base_actuators.md; a
floating base in free_flying or a space mode): the plant applies them, the controller drives them
(its ``actuators_file``), and the run's wheel speeds, propellant and the share of ticks whose base
wrench was exerted are printed.  ``--demo SC_3DoF_orbit`` has them and its orbit already.

A xacro file is expanded (``--xacro-arg name:=value``, repeatable); its ``$(find pkg)`` look in
the ``--package-path`` folders, then ROS_PACKAGE_PATH and the ament index
(:mod:`spart_ros.core.packages`).

``--params``: a node parameters file (keyed ``/**``, as ``config/controller_*.yaml``): its
controller settings (mode, gains, command_joints...) and ``base``/``gravity`` are used;
``--set name=value`` overrides one (YAML value).  ``--waypoint T q...``: a joint trajectory
point (every independent joint, the robot's order), T after the start.  ``--output DIR``: the
demo's PNG plots (tracking, efforts, base attitude).  Exit code 0, or 2 for a bad argument
(one line naming it).
"""

import argparse
import sys

import numpy as np

__all__ = ['main']


def _parser():
    ap = argparse.ArgumentParser(
        prog='python -m spart_ros.simulate',
        description=__doc__.split('\n\n')[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument('urdf', nargs='?', help='URDF (or xacro) file of the robot (not with --demo)')
    ap.add_argument(
        '--demo',
        help='run a scenario of the closed-loop demo: SC_3DoF, kuka_iiwa or SC_3DoF_orbit',
    )
    ap.add_argument(
        '--params', help='controller parameters file (keyed /**, as config/controller_*.yaml)'
    )
    ap.add_argument(
        '--set',
        action='append',
        default=[],
        metavar='NAME=VALUE',
        help='a controller setting (YAML value), e.g. --set mode=joint_impedance --set kp=[400.0]',
    )
    ap.add_argument(
        '--plant',
        choices=('mujoco', 'rk4'),
        default='mujoco',
        help="'mujoco' (the embedded plant, default) or 'rk4' (the core's forward dynamics)",
    )
    ap.add_argument(
        '--base', choices=('fixed', 'floating'), help="default: the params file's, else fixed"
    )
    ap.add_argument(
        '--gravity',
        nargs=3,
        type=float,
        help="[x y z] m/s^2; default: the params file's, else 0 0 -9.81",
    )
    ap.add_argument(
        '--waypoint',
        nargs='+',
        type=float,
        action='append',
        default=[],
        metavar='T_AND_Q',
        help='time after the start [s] then one position per joint (repeat for more points)',
    )
    ap.add_argument(
        '--duration', type=float, help='simulated seconds (default: the last waypoint + 1 s)'
    )
    ap.add_argument(
        '--dt',
        type=float,
        default=0.001,
        help='physics step and control period [s] (default 0.001)',
    )
    ap.add_argument(
        '--rms-after',
        type=float,
        default=1.0,
        help='RMS of the tracking error from this time on [s]',
    )
    ap.add_argument('--output', help='folder for the PNG plots')
    ap.add_argument(
        '--xacro-arg',
        action='append',
        default=[],
        metavar='NAME:=VALUE',
        help='a xacro argument of the robot file (repeatable)',
    )
    ap.add_argument(
        '--actuators',
        metavar='FILE',
        help="the base's reaction wheels and thrusters (YAML; docs/base_actuators.md)",
    )
    orbit = ap.add_argument_group('orbit (floating base; see docs/space_environment.md)')
    orbit.add_argument(
        '--orbit-altitude', type=float, metavar='M', help='circular orbit at this altitude [m]'
    )
    orbit.add_argument(
        '--orbit-mean-motion', type=float, metavar='RAD_S', help='or of this mean motion [rad/s]'
    )
    orbit.add_argument(
        '--orbit-mu',
        type=float,
        metavar='M3_S2',
        help="central body's gravitational parameter [m^3/s^2] (default: the Earth's)",
    )
    orbit.add_argument(
        '--orbit-model',
        choices=('linear', 'nonlinear'),
        default='linear',
        help="tidal field: 'linear' (Hill / Clohessy-Wiltshire, default) or 'nonlinear'",
    )
    from .core.packages import add_package_path_option

    add_package_path_option(ap)
    return ap


def _fail(message):
    print(f'error: {message}', file=sys.stderr)
    return 2


def _settings(args):
    import yaml

    from .sim.closed_loop import _yaml_settings

    settings = _yaml_settings(args.params) if args.params else {}
    for item in args.set:
        name, sep, value = item.partition('=')
        if not sep:
            raise ValueError(f'--set {item!r}: expected NAME=VALUE')
        v = yaml.safe_load(value)
        settings[name.strip()] = (
            tuple(v) if isinstance(v, list) and name.strip() != 'gravity' else v
        )
    return settings


def _orbit(args):
    """Return the CircularOrbit the arguments ask for, or None."""
    from .core.orbit import CircularOrbit, EARTH_MU

    if args.orbit_altitude is None and args.orbit_mean_motion is None:
        if args.orbit_mu is not None:
            raise ValueError('--orbit-mu needs --orbit-altitude or --orbit-mean-motion')
        return None
    return CircularOrbit.make(
        altitude=args.orbit_altitude,
        mean_motion=args.orbit_mean_motion,
        mu=EARTH_MU if args.orbit_mu is None else args.orbit_mu,
        model=args.orbit_model,
    )


def main(argv=None):
    parser = _parser()
    args = parser.parse_args(argv)
    import warnings

    from .core.packages import use_package_path_option

    use_package_path_option(parser, args)
    args.xacro = {}
    for item in args.xacro_arg:
        name, sep, value = item.partition(':=')
        if not sep or not name:
            parser.error(f'--xacro-arg {item!r}: expected NAME:=VALUE')
        args.xacro[name] = value

    from .sim.closed_loop import demo, DEMOS, simulate
    from .sim.joint_limits import JointLimitWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always', JointLimitWarning)
        warnings.simplefilter('default')
        run = _run(args, demo, DEMOS, simulate)
    for w in caught:  # the others as Python prints them; the joint limits in the summary
        if not issubclass(w.category, JointLimitWarning):
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    if isinstance(run, int):
        return run
    run, name, bound, orbit = run
    _summary(
        args,
        run,
        name,
        bound,
        orbit,
        [str(w.message) for w in caught if issubclass(w.category, JointLimitWarning)],
    )
    if args.output:
        for path in run.plots(args.output, name):
            print(f'  wrote {path}')
    return 0


def _run(args, demo, DEMOS, simulate):
    """Return (run, name, the demo's bound or None, orbit), or the exit code of a bad argument."""
    from .core.errors import SpartError

    try:
        orbit = _orbit(args)
        if args.demo:
            if args.urdf:
                return _fail('give a URDF or --demo, not both')
            options = {} if orbit is None else {'orbit': orbit}
            if args.actuators:
                options['actuators'] = args.actuators
            run = demo(args.demo, plant=args.plant, duration=args.duration, **options)
            name, bound = args.demo, DEMOS[args.demo]['rms_bound']
        else:
            if not args.urdf:
                return _fail('a URDF (or --demo NAME) is needed')
            urdf = args.urdf
            if args.xacro:  # expanded here with its arguments: the plant and the model read it
                from .core.urdf import urdf_text

                urdf = urdf_text(args.urdf, args.xacro)
            settings = _settings(args)
            base = args.base or settings.pop('base', 'floating' if orbit else 'fixed')
            settings.pop('base', None)
            default_gravity = [0.0, 0.0, 0.0] if orbit else [0.0, 0.0, -9.81]
            gravity = args.gravity or settings.pop('gravity', default_gravity)
            settings.pop('gravity', None)
            waypoints = [(w[0], w[1:]) for w in args.waypoint]
            duration = (
                args.duration
                if args.duration is not None
                else (waypoints[-1][0] + 1.0 if waypoints else 2.0)
            )
            run = simulate(
                urdf,
                settings,
                duration=duration,
                trajectory=waypoints or None,
                plant=args.plant,
                base=base,
                gravity=gravity,
                dt=args.dt,
                orbit=orbit,
                actuators=args.actuators,
            )
            name, bound = run.robot.name, None
    except (SpartError, OSError, ValueError) as err:
        return _fail(str(err))
    return run, name, bound, orbit


def _summary(args, run, name, bound, orbit, limit_warnings):
    """Print what the run did: tracking, actuators, saturation, joint limits, the final state."""
    c = run.controller
    print(
        f'{name}: mode {c.settings.mode}, {"floating" if run.plant.floating else "fixed"} base, '
        f'plant {type(run.plant).__name__}, {len(run.t)} ticks of '
        f'{run.t[1] - run.t[0] if len(run.t) > 1 else 0:g} s'
    )
    if orbit is not None:
        print(f'  orbit: {orbit.describe()}')
        p = run.base_position[-1]
        print(f'  base link at the end: ({p[0]:.6g}, {p[1]:.6g}, {p[2]:.6g}) m in LVLH')
    if run.wheel_speeds is not None:
        _actuators_summary(run)
    rms = run.rms(args.rms_after)
    err = run.tracking_error()[run.t >= args.rms_after]
    follows = c.law.follows if c.law is not None else 'none'
    if follows != 'joint_trajectory':
        print(
            f'  no tracking error: mode {c.settings.mode} follows '
            + (
                'no reference (it holds no position: there is nothing to track)'
                if follows == 'none'
                else 'end-effector references, not a joint trajectory'
            )
        )
    elif not len(err):
        print(f'  no tick after {args.rms_after:g} s (--rms-after): no tracking error')
    elif not np.all(np.isnan(rms)):
        worst = np.nanmax(np.abs(err), axis=0)
        for joint, r, m in zip(run.joint_names, rms, worst):
            print(
                f'  tracking error after {args.rms_after:g} s  {joint:20s} RMS {r:.2e}   max '
                f'{m:.2e}'
            )
        if bound is not None:
            print(
                f"  largest RMS {np.nanmax(rms):.2e} (the demo's bound: {bound:g}): "
                + ('within' if np.nanmax(rms) < bound else 'BEYOND')
            )
    sat = c.controlled.saturation if c.controlled is not None else None
    if sat is not None and sat.count:
        commands = int(np.sum(~np.isnan(run.commands[:, 0]))) if run.commands.size else 0
        print(
            f'  efforts clamped at their limits in {sat.count} of {commands} commands (the last '
            f'time: {sat.describe()})'
        )
    for text in limit_warnings:
        print(f'  warning: {text}')
    for goal in run.goals:
        print(f'  trajectory: {goal.status} {goal.message}')
    print(
        f'  final state {run.states[-1]}; {run.duration:.3f} s simulated in {run.cpu_seconds:.3f} '
        f's of CPU ({run.cpu_per_simulated_second():.3f} s of CPU per simulated second, '
        f'{run.wall_seconds:.3f} s wall)'
    )


def _actuators_summary(run):
    """Print the base actuators' figures: whichever the robot has (wheels, thrusters or both)."""
    act = run.plant.actuation
    parts = [f'wrench exerted at {run.actuation_feasible.mean() * 100:.1f} % of the ticks']
    if act.n_wheels:
        parts.append(f'wheel speed {np.abs(run.wheel_speeds).max():.1f} rad/s at most')
    if act.n_thrusters:
        parts.append(f'propellant {run.propellant[-1] * 1e3:.3f} g')
    print(
        f'  base actuators ({act.n_wheels} wheels, {act.n_thrusters} thrusters): '
        + '; '.join(parts)
    )


if __name__ == '__main__':
    sys.exit(main())
