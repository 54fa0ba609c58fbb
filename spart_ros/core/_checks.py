"""
Checks that need the robot model, and the entry decorator of the SPART-named functions.

:func:`robot` (is it a :class:`~spart_ros.core.model.Robot`) and :func:`checked`, which checks a
function's ``robot`` and every array argument named in :data:`SHAPES` once, at the entry (shapes
follow from the robot).  The value checks themselves are the public
:mod:`spart_ros.core.checks`; their names are also reachable here for code written against this
module before the split (new code imports :mod:`spart_ros.core.checks`).
"""

import functools
import inspect
import weakref

from .checks import (
    _all_finite,
    _float,
    _ndarray,
    _results_finite,
    array,
    flag,
    given,
    has_symbols,
    huge,
    link_id,
    nonnegative,
    numeric,
    overflow_error,
    quaternion,
    QUATERNION_TOL,
    quiet,
    quietly,
    ResultNotFinite,
    results,
    rotation,
    ROTATION_TOL,
    rotations,
    scalar,
    unit_vector,
    vector,
)
from .errors import InputError, ModelError
from .model import Robot

# the checks of spart_ros.core.checks stay reachable here (see the module docstring)
__all__ = [
    '_all_finite',
    '_float',
    '_ndarray',
    '_results_finite',
    'array',
    'flag',
    'given',
    'has_symbols',
    'huge',
    'link_id',
    'nonnegative',
    'numeric',
    'overflow_error',
    'quaternion',
    'QUATERNION_TOL',
    'quiet',
    'quietly',
    'ResultNotFinite',
    'results',
    'rotation',
    'ROTATION_TOL',
    'rotations',
    'scalar',
    'unit_vector',
    'vector',
    'robot',
    'SHAPES',
    'ROTATIONS',
    'NONE_MEANS',
    'checked',
]

# --- model arguments --------------------------------------------------------------------------


def robot(x, name='robot'):
    """``x`` if it is a Robot; InputError otherwise."""
    if isinstance(x, Robot):
        return x
    raise InputError(
        f'{name}: expected a spart_ros Robot (from urdf2robot, robot_from_urdf, robot_from_dh or '
        f'RobotBuilder.build), got {given(x)}'
    )


# --- the decorator -----------------------------------------------------------------------------

# Shapes of the SPART-named functions' array arguments, by argument name (n links, nq joint
# variables).
SHAPES = {
    'R0': lambda n, nq: (3, 3),
    'r0': lambda n, nq: (3,),
    'qm': lambda n, nq: (nq,),
    'u0': lambda n, nq: (6,),
    'um': lambda n, nq: (nq,),
    'u0dot': lambda n, nq: (6,),
    'umdot': lambda n, nq: (nq,),
    'RL': lambda n, nq: (3, 3, n),
    'rL': lambda n, nq: (3, n),
    'e': lambda n, nq: (3, n),
    'g': lambda n, nq: (3, n),
    'Bij': lambda n, nq: (6, 6, n, n),
    'Bi0': lambda n, nq: (6, 6, n),
    'P0': lambda n, nq: (6, 6),
    'pm': lambda n, nq: (6, n),
    't0': lambda n, nq: (6,),
    'tL': lambda n, nq: (6, n),
    't0dot': lambda n, nq: (6,),
    'tLdot': lambda n, nq: (6, n),
    'rp': lambda n, nq: (3,),
    'tp': lambda n, nq: (6,),
    'I0': lambda n, nq: (3, 3),
    'Im': lambda n, nq: (3, 3, n),
    'M0_tilde': lambda n, nq: (6, 6),
    'Mm_tilde': lambda n, nq: (6, 6, n),
    'H0': lambda n, nq: (6, 6),
    'N': lambda n, nq: (6 + 6 * n, 6 + nq),
    'Ndot': lambda n, nq: (6 + 6 * n, 6 + nq),
    'wF0': lambda n, nq: (6,),
    'wFm': lambda n, nq: (6, n),
    'tau0': lambda n, nq: (6,),
    'taum': lambda n, nq: (nq,),
    'gravity': lambda n, nq: (3,),
    'offset': lambda n, nq: (3,),
}
# arguments whose values must be rotations; arguments for which None has a meaning even
# without a default (point_jacobian: the CoM itself)
ROTATIONS = frozenset(('R0', 'RL'))
NONE_MEANS = frozenset(('offset',))


# every SHAPES entry of each robot seen, built once (beside the robot, which stays unchanged)
_SHAPES_OF = weakref.WeakKeyDictionary()


def _shapes(robot):
    """Every SHAPES entry for this robot."""
    try:
        return _SHAPES_OF[robot]
    except KeyError:
        shapes = _SHAPES_OF[robot] = {
            k: f(robot.n_links_joints, robot.n_q) for k, f in SHAPES.items()
        }
        return shapes


def _check_one(name, x, shape):
    if name == 'R0':
        return rotation(name, x)
    if name == 'RL':
        return rotations(name, x, shape[2])
    return vector(name, x, shape[0]) if len(shape) == 1 else array(name, x, shape)


def checked(fn=None, *, results=True, solves=False):
    """
    Check ``robot`` and every array argument named in SHAPES once, at the entry (decorator).

    Shapes follow from ``robot`` (n, n_q); R0 must be a rotation, RL a stack of them;
    lists become arrays, (k, 1) columns become 1-D; None is an error except for the
    arguments whose default is None.  ``results=True`` (a numpy body) also checks that every
    float result is finite and runs the body under :func:`quiet` (pass False when compiled
    code checks its own); an overflow, reported by the function as ResultNotFinite or found
    in its results, becomes an InputError naming the inputs (a ModelError naming the robot
    when only its model is that large).  ``solves=True`` (a body that solves a linear system):
    every checked argument comes as float64 (object arrays of numbers converted, symbols an
    InputError naming the argument, see :func:`numeric`) and a symbolic robot is a ModelError.
    """
    if fn is None:
        return functools.partial(checked, results=results, solves=solves)
    sig = inspect.signature(fn)
    params = list(sig.parameters)
    robot_at = params.index('robot')
    optional = frozenset(
        name for name in params if sig.parameters[name].default is None or name in NONE_MEANS
    )
    # (position, name, None may pass, value is a plain array: the inline fast path applies)
    plan = [
        (at, name, name in optional, name not in ROTATIONS)
        for at, name in enumerate(params)
        if name in SHAPES
    ]
    body = (
        quietly(fn) if results else fn
    )  # a numpy body: an overflow is reported below, not warned about
    solve = f'{fn.__name__} (a linear solve)'

    def named_inputs(args):
        return [
            (name, args[at]) for at, name, _, _ in plan if at < len(args) and args[at] is not None
        ]

    def call(args, kwargs):
        try:
            out = body(*args, **kwargs)
            if results:
                _results_finite(out)
            return out
        except ResultNotFinite:
            raise overflow_error(fn.__name__, named_inputs(args), args[robot_at]) from None

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if kwargs or len(args) <= robot_at:  # keywords: bind by name (slower, same checks)
            bound = sig.bind(*args, **kwargs)  # a missing argument: Python's TypeError
            args, kwargs = list(bound.args), bound.kwargs
        else:
            args, kwargs = list(args), {}
        robot_ = args[robot_at]
        if type(robot_) is not Robot:
            robot(robot_)
        if solves and robot_.symbolic:
            raise ModelError(
                f'robot {robot_.name!r} is symbolic: {solve} needs numbers (the SPART-named chain '
                'up to ID takes sympy values)'
            )
        shapes = _shapes(robot_)
        last = len(args)
        for at, name, may_be_none, plain in plan:
            if at >= last:
                continue
            x = args[at]
            if x is None and may_be_none:
                continue
            shape = shapes[name]
            # the common case inline: a C-ordered float64 array of the right shape, finite
            if (
                plain
                and type(x) is _ndarray
                and x.dtype is _float
                and x.shape == shape
                and _all_finite(x)
            ):
                continue
            x = _check_one(name, x, shape)
            args[at] = numeric(name, x, solve) if solves else x
        return call(args, kwargs)

    return wrapper
