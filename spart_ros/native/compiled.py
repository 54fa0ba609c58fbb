"""
The compiled kernels, loaded from the extension modules built ahead of time (:mod:`.build`).

Importing this module loads ``<library_name()>.<ext>`` and the other parts'
(:data:`.exports.PARTS`; about a millisecond; numba is not imported) from this package's
folder, else from the user's cache (``$XDG_CACHE_HOME/spart_ros/native``, default
``~/.cache/...``).  When neither holds a build
of these sources (a fresh checkout, an edited kernel), it is built first, once, in a separate
process (``python -m spart_ros.native.build``, about a minute; in this package's folder if
writable, else in the cache), and a line on stderr says so.  ``scripts/setup.sh`` builds it
before ``colcon build`` installs it beside the package, so that tests and nodes share one build.

The functions take exactly the argument types of :data:`.exports.EXPORTS` (numba's unboxing
does not check them): call them only with float64 arrays of the declared number of dimensions,
as :class:`spart_ros.core.fast.FastDynamics` and :mod:`spart_ros.core.checks` do, or through
:func:`call` (``_call.c``): ``call(kernel, KINDS[name], *args)`` checks every argument's type
in C (a few ns each) and returns ``kernel(*args)``, or None when one is of another type.
"""

from importlib.machinery import EXTENSION_SUFFIXES
import importlib.util
import os
import subprocess
import sys
import types

from .exports import EXPORTS, HERE, library_name, PARTS

NAME = library_name()
_FILE = NAME + EXTENSION_SUFFIXES[0]


class NativeBuildError(ImportError):
    """The compiled kernels are not built and building them failed (the message says why)."""


def cache_folder():
    """Return the user's cache folder for builds (when the package's folder is read-only)."""
    return os.path.join(
        os.environ.get('XDG_CACHE_HOME') or os.path.join(os.path.expanduser('~'), '.cache'),
        'spart_ros',
        'native',
    )


def _find():
    for folder in (HERE, cache_folder()):
        if all(
            os.path.exists(os.path.join(folder, NAME + suffix + EXTENSION_SUFFIXES[0]))
            for suffix in PARTS + ('_call',)
        ):
            return os.path.join(folder, _FILE)
    return None


def _build():
    folder = HERE if os.access(HERE, os.W_OK) else cache_folder()
    print(
        f'[spart_ros] building the compiled kernels into {folder} (once for these sources; about '
        'a minute)',
        file=sys.stderr,
        flush=True,
    )
    root = os.path.dirname(os.path.dirname(HERE))  # the folder holding this spart_ros package
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(p for p in (root, os.environ.get('PYTHONPATH')) if p),
    )
    done = subprocess.run(
        [sys.executable, '-m', 'spart_ros.native.build', '--output', folder],
        env=env,
        capture_output=True,
        text=True,
    )
    path = os.path.join(folder, _FILE)
    if done.returncode != 0 or not os.path.exists(path):
        tail = '\n'.join((done.stderr or done.stdout).strip().splitlines()[-12:])
        raise NativeBuildError(
            f'spart_ros: building the compiled kernels failed (needs numba, a C compiler and '
            f"Python's headers; run `python -m spart_ros.native.build` to see why):\n{tail}"
        )
    return path


def _load(path, name=NAME):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_parts = [_load(_find() or _build())]
#: the file the kernels were loaded from (the first of the parts: .exports.PARTS)
LIBRARY = _parts[0].__file__
_parts += [_load(LIBRARY.replace(NAME, NAME + s), NAME + s) for s in PARTS[1:]]
#: every part's kernels in one namespace
_library = types.SimpleNamespace(
    **{k: getattr(m, k) for m in _parts for k in dir(m) if not k.startswith('__')}
)
#: call(kernel, kinds, *args): ``kernel(*args)`` if every argument is of its kind, else None
#: (_call.c)
call = _load(LIBRARY.replace(NAME, NAME + '_call'), NAME + '_call').call
#: {exported name: the ``kinds`` of its arguments for :func:`call`}: 0 for int arrays and for the
#: caller's own C-ordered arrays (model, workspace, outputs), the number of dimensions for the
#: float64 arrays a caller passes in (any layout), 'b' for flags; ints (link) are checked by the
#: caller
KINDS = {
    name: bytes(
        0
        if t.startswith('int') or t.endswith('::1]')
        else ord('b')
        if t == 'boolean'
        else t.count(':')
        for t in types
    )
    for name, (_, _, types, _) in EXPORTS.items()
}
missing = sorted(set(EXPORTS) - set(dir(_library)))
if missing:
    raise NativeBuildError(f'spart_ros: {LIBRARY} lacks {missing}: delete it to rebuild')

rnea, rnea_loads = _library.rnea, _library.rnea_loads
floating_rnea, floating_rnea_loads = _library.floating_rnea, _library.floating_rnea_loads
aba, aba_loads = _library.aba, _library.aba_loads
crba, jacobian, jacobian_and_bias, twists_and_com = (
    _library.crba,
    _library.jacobian,
    _library.jacobian_and_bias,
    _library.twists_and_com,
)
finite_c1, finite_c2, finite_c3, finite_c4 = (
    _library.finite_c1,
    _library.finite_c2,
    _library.finite_c3,
    _library.finite_c4,
)
first_non_rotation2, first_non_rotation3 = (
    _library.first_non_rotation2,
    _library.first_non_rotation3,
)
spart_kinematics, spart_differential_kinematics = (
    _library.spart_kinematics,
    _library.spart_differential_kinematics,
)
spart_velocities, spart_accelerations = _library.spart_velocities, _library.spart_accelerations
spart_inertia_in_inertial_frame = _library.spart_inertia_in_inertial_frame
spart_inverse_dynamics = _library.spart_inverse_dynamics
orbit_loads_mujoco, rigid_body_steps = _library.orbit_loads_mujoco, _library.rigid_body_steps
dissipation_step, base_actuators_step = _library.dissipation_step, _library.base_actuators_step
lvlh_state, ros_quaternion = _library.lvlh_state, _library.ros_quaternion
tidal_acceleration = _library.tidal_acceleration
friction_correction = _library.friction_correction
attitude_torque, wheel_base_torque = _library.attitude_torque, _library.wheel_base_torque
wheel_state, thruster_pulses = _library.wheel_state, _library.thruster_pulses
wheel_torques = _library.wheel_torques
first_violation, largest_excess = _library.first_violation, _library.largest_excess
jump_excess, quintic_sample = _library.jump_excess, _library.quintic_sample
free_flying_base, bvls = _library.free_flying_base, _library.bvls
input_problem, clamp_command = _library.input_problem, _library.clamp_command
mujoco_base_state, hold_efforts = _library.mujoco_base_state, _library.hold_efforts
rigid_base_state, pd_acceleration = _library.rigid_base_state, _library.pd_acceleration
base_frames_floating, base_link_wrench = _library.base_frames_floating, _library.base_link_wrench
# analytic derivatives and batches (derivatives.py, batch.py)
rnea_derivatives, aba_derivatives = _library.rnea_derivatives, _library.aba_derivatives
rnea_batch, aba_batch = _library.rnea_batch, _library.aba_batch
crba_batch, jacobian_batch = _library.crba_batch, _library.jacobian_batch
rnea_derivatives_batch = _library.rnea_derivatives_batch
aba_derivatives_batch = _library.aba_derivatives_batch
del missing
