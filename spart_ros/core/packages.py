"""
Where ``$(find pkg)`` of a xacro robot description finds a package's folder (no ROS needed).

xacro itself asks the ament index only (``get_package_share_directory``: the packages of the
sourced workspaces), so a description package that is not installed in one (a folder checked out
beside the robot, a ROS 1 package) cannot be expanded.  :func:`find_package` looks, in order, in

1. the folders a caller names (``package_paths`` of :func:`spart_ros.core.urdf.robot_from_urdf`
   and :func:`~spart_ros.core.urdf.urdf_text`);
2. the folders this process was given (:func:`set_package_paths`: the CLIs' ``--package-path``,
   the nodes' ``package_paths`` parameter);
3. ``ROS_PACKAGE_PATH`` (folders separated by ``:``, as in ROS 1);
4. the ament index (``AMENT_PREFIX_PATH``), as xacro does.

A folder of 1-3 is a package (it holds a ``package.xml`` naming it, or has the package's name),
holds it (a sub-folder of the package's name), or is searched below for one (as rospack crawls
``ROS_PACKAGE_PATH``: a ``package.xml`` naming it, in sub-folders, not in a package's own, nor in
hidden ones or those marked ``COLCON_IGNORE``, ``AMENT_IGNORE`` or ``CATKIN_IGNORE``).  A
package found nowhere raises :class:`PackageNotFound`, which says where it looked and how to
name a folder.
"""

import os
import re

from .errors import InputError, URDFError

__all__ = [
    'ENV',
    'PackageNotFound',
    'find_package',
    'package_paths',
    'set_package_paths',
    'add_package_path_option',
    'use_package_path_option',
    'HOW',
]

#: the environment variable of ROS 1's package path, honoured too
ENV = 'ROS_PACKAGE_PATH'
#: how to name a package's folder, for error messages
HOW = (
    '--package-path DIR (python -m spart_ros.inspect, spart_ros.simulate, spart_ros.codegen), '
    "the nodes' parameter package_paths, robot_from_urdf(..., package_paths=[DIR]), or "
    'ROS_PACKAGE_PATH=DIR (DIR: the package folder, or a folder holding it)'
)
_IGNORE = ('COLCON_IGNORE', 'AMENT_IGNORE', 'CATKIN_IGNORE')
_NAME = re.compile(r'<name>\s*([^<\s]+)\s*</name>')
_paths = []  # set_package_paths


class PackageNotFound(URDFError):
    """A package ``$(find ...)`` names is in none of the places searched (the message says)."""


def set_package_paths(paths):
    """
    Give this process the folders ``paths`` (list of str) to look for packages in.

    They come after the folders a call names and before ROS_PACKAGE_PATH; an empty list clears
    them.  InputError naming a folder that does not exist.
    """
    paths = [os.path.abspath(os.path.expanduser(str(p))) for p in (paths or ())]
    missing = [p for p in paths if not os.path.isdir(p)]
    if missing:
        raise InputError(f'package_paths: not folders: {missing}')
    _paths[:] = paths


def package_paths(extra=()):
    """
    Return the folders searched before the ament index, in order (see the module docstring).

    ``extra``: folders a call names, first.
    """
    env = [p for p in os.environ.get(ENV, '').split(os.pathsep) if p]
    out = []
    for p in [os.path.abspath(os.path.expanduser(str(x))) for x in extra or ()] + _paths + env:
        if p not in out:
            out.append(p)
    return out


def _package_name(folder):
    """Return the <name> of the package.xml in ``folder``, or None when it has none."""
    try:
        with open(os.path.join(folder, 'package.xml'), encoding='utf-8') as f:
            m = _NAME.search(f.read())
    except OSError:
        return None
    return m.group(1) if m else os.path.basename(folder)


def _crawl(root, name):
    """Return the folder of package ``name`` at or below ``root``, or None."""
    if not os.path.isdir(root):
        return None
    if os.path.basename(os.path.normpath(root)) == name or _package_name(root) == name:
        return root
    child = os.path.join(root, name)
    if os.path.isdir(child) and _package_name(child) in (None, name):  # held by the folder named
        return child
    for top, dirs, files in os.walk(root):
        if top != root and ('package.xml' in files or any(i in files for i in _IGNORE)):
            dirs[:] = []  # a package's own folders, or ignored: not searched
            if 'package.xml' in files and _package_name(top) == name:
                return top
            continue
        dirs[:] = sorted(d for d in dirs if not d.startswith('.'))
        if name in dirs and os.path.isfile(os.path.join(top, name, 'package.xml')):
            if _package_name(os.path.join(top, name)) == name:
                return os.path.join(top, name)
    return None


def find_package(name, extra=()):
    """
    Return the folder of package ``name`` (``$(find name)``; see the module docstring).

    ``extra``: folders to look in first.  :class:`PackageNotFound` (a URDFError) saying where it
    looked and how to name a folder.
    """
    searched = package_paths(extra)
    for root in searched:
        found = _crawl(root, name)
        if found is not None:
            return found
    prefixes = [p for p in os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep) if p]
    try:
        from ament_index_python.packages import get_package_share_directory

        return get_package_share_directory(name)
    except ImportError:
        prefixes = ['(ament_index_python is not installed)']
    except (LookupError, ValueError):  # PackageNotFoundError is a KeyError
        pass
    given = f'the folders given {searched}' if searched else 'no folder given'
    raise PackageNotFound(
        f'package {name!r} of $(find {name}) not found: looked in {given} ({ENV} '
        f'{"set" if os.environ.get(ENV) else "unset"}) and the ament index {prefixes}; name '
        f'its folder: {HOW}'
    )


def add_package_path_option(parser):
    """Add ``--package-path DIR`` (repeatable) to the argparse ``parser`` of a command line."""
    parser.add_argument(
        '--package-path',
        action='append',
        default=[],
        metavar='DIR',
        help='a folder where $(find pkg) of a xacro file looks for packages: the package '
        'folder, or a folder holding it (repeatable; then ROS_PACKAGE_PATH, the ament index)',
    )


def use_package_path_option(parser, args):
    """Give this process the ``--package-path`` folders of ``args`` (a bad one: parser.error)."""
    try:
        set_package_paths(args.package_path)
    except InputError as err:
        parser.error(f'--package-path: {err}')
