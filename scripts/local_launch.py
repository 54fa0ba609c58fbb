#!/usr/bin/env python3
"""
Run a spart_ros launch file where ``ros2 launch`` is missing (launch, launch_ros not installable).

    source scripts/env.sh
    python scripts/local_launch.py dynamics.launch.py urdf_path:=urdf/SC_3DoF.urdf base:=floating
    python scripts/local_launch.py dynamics.launch.py --print      # the node command lines only

does what ``ros2 launch spart_ros dynamics.launch.py urdf_path:=... base:=floating`` does on a
full ROS 2 install: it reads the INSTALLED launch file (share/spart_ros/launch/<file>) with
small stand-ins for the few launch/launch_ros names our launch files use (LaunchDescription,
DeclareLaunchArgument, LaunchConfiguration, OpaqueFunction, Node, IncludeLaunchDescription with a
PythonLaunchDescriptionSource, IfCondition/UnlessCondition, PathJoinSubstitution, FindPackageShare,
RegisterEventHandler with OnProcessExit) and starts the same node
processes with the command lines launch_ros would give them: the installed executable, the
node name and namespace remaps, one ``--params-file`` per ``parameters`` entry in order (YAML
files as they are, dicts written to a temporary ``/**`` file), remappings and arguments.  So
the launch files and their YAML are what runs here, not a copy of their logic.  Anything else
in a launch file raises an error naming it.  Ctrl-C stops every node (SIGINT, then SIGTERM).

``--show-args`` lists the launch arguments as ``ros2 launch --show-args`` does.  A launch file for
a machine with more installed (gazebo.launch.py: Gazebo, ros2_control) can be listed here
(``--print``: the nodes it would start, the includes and packages that are not installed) but
not run: the local launcher refuses to start a file with missing packages or event handlers.

Where it can, it behaves as real ``ros2 launch`` does: an undeclared ``name:=value`` is ignored
(a warning here; real launch is silent), a missing parameter file is skipped with a warning, an
empty value (``namespace:=``) is refused.  Where it cannot (any launch construct beyond the
names above, events, other substitutions), it says so and stops rather than guess.
"""

import argparse
import os
from pathlib import Path
import signal
import subprocess
import sys
import tempfile
import types

import yaml

PACKAGE = 'spart_ros'


# --- stand-ins for the launch / launch_ros names the launch files use ------------------------
class LaunchContext:

    def __init__(self, configurations):
        self.launch_configurations = dict(configurations)


class LaunchConfiguration:

    def __init__(self, variable_name, default=None):
        self.variable_name, self.default = variable_name, default

    def perform(self, context):
        value = context.launch_configurations.get(self.variable_name, self.default)
        if value is None:
            raise LaunchError(f'launch configuration {self.variable_name!r} is not set')
        return value


class DeclareLaunchArgument:

    def __init__(self, name, default_value=None, description='', **_):
        self.name, self.default_value, self.description = name, default_value, description


class PathJoinSubstitution:

    def __init__(self, substitutions):
        self.substitutions = list(substitutions)

    def perform(self, context):
        return os.path.join(*[_resolve(x, context) for x in self.substitutions])


class FindPackageShare:

    def __init__(self, package):
        self.package = package

    def perform(self, context):
        from ament_index_python.packages import get_package_share_directory, PackageNotFoundError

        name = _resolve(self.package, context)
        try:
            return get_package_share_directory(name)
        except PackageNotFoundError:
            raise MissingPackage(name) from None


class OnProcessExit:

    def __init__(self, *, target_action, on_exit, **unsupported):
        if unsupported:
            raise LaunchError(
                'OnProcessExit arguments not supported by the local launcher: '
                f'{sorted(unsupported)}'
            )
        self.target_action = target_action
        self.on_exit = list(on_exit) if isinstance(on_exit, (list, tuple)) else [on_exit]


class RegisterEventHandler:

    def __init__(self, event_handler, **unsupported):
        if unsupported or not isinstance(event_handler, OnProcessExit):
            raise LaunchError(
                'RegisterEventHandler: only OnProcessExit handlers are supported by the local '
                'launcher'
            )
        self.event_handler = event_handler


class OpaqueFunction:

    def __init__(self, function, args=None, kwargs=None):
        self.function, self.args, self.kwargs = function, args or [], kwargs or {}


class IfCondition:
    """
    True when the expression evaluates to 'true' or '1'.

    Launch's rule; anything else but 'false'/'0' is an error.
    """

    negate = False

    def __init__(self, predicate_expression):
        self.expression = predicate_expression

    def evaluate(self, context):
        value = _resolve(self.expression, context).strip().lower()
        if value not in ('true', '1', 'false', '0'):
            raise LaunchError(f'condition expression {value!r} is not true/false/1/0')
        return (value in ('true', '1')) != self.negate


class UnlessCondition(IfCondition):
    negate = True


class PythonLaunchDescriptionSource:

    def __init__(self, launch_file_path):
        self.path = launch_file_path


class IncludeLaunchDescription:
    def __init__(
        self, launch_description_source, launch_arguments=None, condition=None, **unsupported
    ):
        if unsupported:
            raise LaunchError(
                f'IncludeLaunchDescription arguments not supported by the local launcher: '
                f'{sorted(unsupported)}'
            )
        self.source, self.condition = launch_description_source, condition
        self.launch_arguments = list(launch_arguments or [])


class Node:
    def __init__(
        self,
        *,
        package,
        executable,
        name=None,
        namespace=None,
        parameters=None,
        remappings=None,
        arguments=None,
        output='screen',
        prefix=None,
        condition=None,
        **unsupported,
    ):
        if unsupported:
            raise LaunchError(
                f'Node arguments not supported by the local launcher: {sorted(unsupported)}'
            )
        self.condition = condition
        self.package, self.executable, self.name, self.namespace = (
            package,
            executable,
            name,
            namespace,
        )
        self.parameters, self.remappings = list(parameters or []), list(remappings or [])
        self.arguments, self.prefix = list(arguments or []), prefix
        self.after = (
            None  # the Node whose exit starts this one (RegisterEventHandler + OnProcessExit)
        )


class LaunchDescription:

    def __init__(self, entities=()):
        self.entities = list(entities)


class LaunchError(RuntimeError):
    """A launch file or its arguments the local launcher cannot run."""


class MissingPackage(LaunchError):
    """A package a launch file needs is not installed here."""

    def __init__(self, package):
        super().__init__(f'package {package!r} is not installed here')
        self.package = package


def warn(text):
    print(f'[local_launch] WARNING: {text}', file=sys.stderr, flush=True)


def _stand_in_modules():
    launch = types.ModuleType('launch')
    launch.LaunchDescription, launch.LaunchContext = LaunchDescription, LaunchContext
    actions = types.ModuleType('launch.actions')
    actions.DeclareLaunchArgument, actions.OpaqueFunction = DeclareLaunchArgument, OpaqueFunction
    actions.IncludeLaunchDescription = IncludeLaunchDescription
    substitutions = types.ModuleType('launch.substitutions')
    substitutions.LaunchConfiguration, substitutions.PathJoinSubstitution = (
        LaunchConfiguration,
        PathJoinSubstitution,
    )
    actions.RegisterEventHandler = RegisterEventHandler
    event_handlers = types.ModuleType('launch.event_handlers')
    event_handlers.OnProcessExit = OnProcessExit
    launch_ros_substitutions = types.ModuleType('launch_ros.substitutions')
    launch_ros_substitutions.FindPackageShare = FindPackageShare
    conditions = types.ModuleType('launch.conditions')
    conditions.IfCondition, conditions.UnlessCondition = IfCondition, UnlessCondition
    sources = types.ModuleType('launch.launch_description_sources')
    sources.PythonLaunchDescriptionSource = PythonLaunchDescriptionSource
    launch_ros = types.ModuleType('launch_ros')
    launch_ros_actions = types.ModuleType('launch_ros.actions')
    launch_ros_actions.Node = Node
    launch.actions, launch.substitutions, launch_ros.actions = (
        actions,
        substitutions,
        launch_ros_actions,
    )
    launch.conditions, launch.launch_description_sources = conditions, sources
    launch.event_handlers, launch_ros.substitutions = event_handlers, launch_ros_substitutions
    return {
        'launch': launch,
        'launch.actions': actions,
        'launch.substitutions': substitutions,
        'launch.conditions': conditions,
        'launch.launch_description_sources': sources,
        'launch.event_handlers': event_handlers,
        'launch_ros': launch_ros,
        'launch_ros.actions': launch_ros_actions,
        'launch_ros.substitutions': launch_ros_substitutions,
    }


# --- reading a launch file -------------------------------------------------------------------
def launch_file_path(name):
    """share/spart_ros/launch/<name> of the installed package (or ``name`` if it is a path)."""
    if os.sep in name:
        return Path(name)
    from ament_index_python.packages import get_package_share_directory

    return Path(get_package_share_directory(PACKAGE)) / 'launch' / name


def load_description(path):
    """generate_launch_description() of the launch file at ``path``, run with the stand-ins."""
    stand_ins = _stand_in_modules()
    saved = {k: sys.modules.get(k) for k in stand_ins}
    sys.modules.update(stand_ins)
    try:
        namespace = {'__file__': str(path), '__name__': 'launch_file'}
        exec(compile(Path(path).read_text(encoding='utf-8'), str(path), 'exec'), namespace)
        return namespace['generate_launch_description']()
    finally:
        for k, module in saved.items():
            if module is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = module


def _resolve(value, context):
    if isinstance(value, (LaunchConfiguration, PathJoinSubstitution, FindPackageShare)):
        return value.perform(context)
    if isinstance(value, dict):
        return {k: _resolve(v, context) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_resolve(v, context) for v in value)
    return value


def arguments_of(path):
    """
    Return the launch file's DeclareLaunchArgument entities.

    As [(name, default or None, description)].
    """
    return [
        (e.name, e.default_value, e.description)
        for e in load_description(path).entities
        if isinstance(e, DeclareLaunchArgument)
    ]


def nodes_of(path, arguments, missing=None):
    """
    Return the Node entities of the launch file for ``arguments`` ({name: value}).

    With every LaunchConfiguration resolved (included launch files too); a Node started by an
    OnProcessExit handler comes after its target, with ``after`` set to it. An included launch file
    of a package that is not installed raises MissingPackage, or, when ``missing`` is a list, is
    appended to it as a line of text (listing a launch file for a bigger install: ``--print``).
    """
    description = load_description(path)
    declared = [e for e in description.entities if isinstance(e, DeclareLaunchArgument)]
    names = [d.name for d in declared]
    unknown = sorted(set(arguments) - set(names))
    if unknown:  # real ros2 launch sets them as configurations nobody reads: ignored
        warn(
            f'{Path(path).name}: ignoring undeclared launch argument(s) {unknown} (as ros2 launch '
            f'does); declared: {names}'
        )
    context = LaunchContext({d.name: d.default_value for d in declared})
    context.launch_configurations.update(arguments)
    nodes, pending = [], list(description.entities)
    while pending:
        entity = pending.pop(0)
        if isinstance(entity, DeclareLaunchArgument):
            continue
        condition = getattr(entity, 'condition', None)
        if condition is not None and not condition.evaluate(context):
            continue
        if isinstance(entity, OpaqueFunction):
            pending[0:0] = list(entity.function(context, *entity.args, **entity.kwargs) or [])
        elif isinstance(entity, IncludeLaunchDescription):
            # the included file's declared defaults, overridden by the arguments given to it
            # (ros2 launch scopes them the same way for what the included file reads)
            included = {
                _resolve(k, context): _resolve(v, context) for k, v in entity.launch_arguments
            }
            try:
                source = Path(_resolve(entity.source.path, context))
            except MissingPackage as err:
                if missing is None:
                    raise
                missing.append(
                    f'include of a launch file of {err.package!r} ({err}), arguments {included}'
                )
                continue
            nodes += nodes_of(source, included, missing)
        elif isinstance(entity, RegisterEventHandler):
            handler = entity.event_handler
            for action in handler.on_exit:
                if not isinstance(action, Node):
                    raise LaunchError(
                        f'{Path(path).name}: OnProcessExit may start Nodes only here, got '
                        f'{type(action).__name__}'
                    )
                action.after = handler.target_action
            pending[0:0] = handler.on_exit
        elif isinstance(entity, Node):
            for attr in (
                'package',
                'executable',
                'name',
                'namespace',
                'parameters',
                'remappings',
                'arguments',
                'prefix',
            ):
                setattr(entity, attr, _resolve(getattr(entity, attr), context))
            nodes.append(entity)
        else:
            raise LaunchError(
                f'{Path(path).name}: {type(entity).__name__} is not supported by the local '
                'launcher'
            )
    return nodes


def command_line(node, workdir):
    """
    Return the command ros2 launch would run for ``node``.

    Dict parameters go to files in ``workdir``.
    """
    from ament_index_python.packages import get_package_prefix, PackageNotFoundError

    try:
        exe = Path(get_package_prefix(node.package)) / 'lib' / node.package / node.executable
    except PackageNotFoundError:
        raise LaunchError(
            f'package {node.package!r} (node {node.executable}) is not installed'
        ) from None
    if not os.access(exe, os.X_OK):
        raise LaunchError(f'{exe} is not an installed executable (run scripts/setup.sh)')
    cmd = (
        (node.prefix.split() if node.prefix else [])
        + [str(exe)]
        + [str(a) for a in node.arguments]
    )
    ros = []
    if node.name:
        ros += ['-r', f'__node:={node.name}']
    if node.namespace:
        ros += [
            '-r',
            '__ns:='
            + (node.namespace if node.namespace.startswith('/') else '/' + node.namespace),
        ]
    for src, dst in node.remappings:
        ros += ['-r', f'{src}:={dst}']
    for k, params in enumerate(node.parameters):
        if isinstance(params, dict):
            path = Path(workdir) / f'{node.name or node.executable}_{k}.yaml'
            path.write_text(yaml.safe_dump({'/**': {'ros__parameters': params}}), encoding='utf-8')
            params = path
        elif not Path(params).is_file():  # ros2 launch warns and starts the node without it
            warn(
                f'parameter file {params} of node {node.name or node.executable} not found: '
                'skipped (as ros2 launch does)'
            )
            continue
        ros += ['--params-file', str(params)]
    return cmd + (['--ros-args'] + ros if ros else [])


def parse_arguments(items):
    """['name:=value', ...] -> {name: value} (ros2 launch's syntax)."""
    out = {}
    for item in items:
        name, sep, value = item.partition(':=')
        if not sep or not name:
            raise LaunchError(f'launch arguments are name:=value, got {item!r}')
        if not value:  # ros2 launch refuses an empty value too
            raise LaunchError(
                f'launch argument {name!r} has an empty value ({item!r}); give a value or leave '
                'the argument out'
            )
        out[name] = value
    return out


def show_arguments(path):
    """Return the launch arguments as ``ros2 launch <file> --show-args`` prints them."""
    lines = ["Arguments (pass arguments as '<name>:=<value>'):", '']
    for name, default, description in arguments_of(path):
        lines += [
            f"    '{name}':",
            f'        {description or "no description given"}',
            f"        (default: '{default}')" if default is not None else '',
            '',
        ]
    return '\n'.join(line for line in lines if line is not None)


def _listing(nodes, missing, workdir):
    """
    --print lines: one command per node (a note for packages not installed here).

    The missing includes.
    """
    lines = []
    for node in nodes:
        when = (
            f' (after {node.after.executable} {" ".join(node.after.arguments[:1])} exits)'
            if node.after
            else ''
        )
        try:
            lines.append(' '.join(command_line(node, workdir)) + when)
        except LaunchError as err:
            lines.append(
                f'[not installed here: {err}] {node.package} {node.executable} '
                + ' '.join(str(a) for a in node.arguments)
                + when
            )
    return lines + [f'[not installed here] {m}' for m in missing]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        'launch_file', help='a launch file of spart_ros (e.g. dynamics.launch.py) or a path'
    )
    ap.add_argument('arguments', nargs='*', help='launch arguments, name:=value')
    ap.add_argument('--print', action='store_true', help='print the node command lines and exit')
    ap.add_argument('--show-args', action='store_true', help='list the launch arguments and exit')
    args = ap.parse_args(argv)
    try:
        path = launch_file_path(args.launch_file)
        if args.show_args:
            print(show_arguments(path))
            return 0
        missing = [] if args.print else None
        nodes = nodes_of(path, parse_arguments(args.arguments), missing)
        workdir = tempfile.mkdtemp(prefix='spart_launch_')
        if args.print:
            for line in _listing(nodes, missing, workdir):
                print('[local_launch] ' + line, flush=True)
            return 0
        if any(n.after is not None for n in nodes):
            raise LaunchError(
                f'{path.name} starts nodes on process exits (RegisterEventHandler): the local '
                'launcher lists them (--print) but does not run them'
            )
        commands = [command_line(n, workdir) for n in nodes]
    except (LaunchError, OSError) as err:
        print(f'[local_launch] {err}', file=sys.stderr)
        return 2
    # raised by the launch file itself: reported as ros2 launch reports it
    except Exception as err:  # noqa: BLE001
        print(
            f'[local_launch] [ERROR] [launch]: Caught exception in launch: {type(err).__name__}: '
            f'{err}',
            file=sys.stderr,
        )
        return 1
    for cmd in commands:
        print('[local_launch] ' + ' '.join(cmd), flush=True)
    procs = [subprocess.Popen(cmd) for cmd in commands]
    # both stop every node; SIGINT explicitly too: a shell starting this in the background
    # hands it SIGINT ignored, and Ctrl-C / kill -INT must still work
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt))
    try:
        while all(p.poll() is None for p in procs):
            try:
                procs[0].wait(timeout=0.5)
            except subprocess.TimeoutExpired:
                pass
    except KeyboardInterrupt:
        pass
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.terminate()
    return max((p.returncode or 0) for p in procs) if procs else 0


if __name__ == '__main__':
    sys.exit(main())
