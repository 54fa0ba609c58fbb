"""Argument checks done once at each public entry: shape, length, finiteness.

Messages name the argument, the expected shape and what was given, so a ROS
node can pass them on to its user unchanged.
"""
import math

import numpy as np

from .errors import InputError

_ndarray, _float = np.ndarray, np.dtype(float)


def array(name, x, shape):
    """``x`` as an array of exactly ``shape`` (ints; None = any); float unless symbolic.

    Raises InputError naming ``name`` for a wrong shape or a NaN / infinite entry.
    """
    if type(x) is _ndarray and x.dtype == _float and x.shape == shape and math.isfinite(x.sum()):
        return x  # fast path: the sum is finite only if every entry is
    try:
        a = np.asarray(x)
    except Exception as err:  # ragged lists and the like
        raise InputError(f'{name}: cannot be read as an array ({err})') from None
    if a.dtype != object:
        if not (np.issubdtype(a.dtype, np.number) or a.dtype == bool):
            raise InputError(f'{name}: expected numbers, got dtype {a.dtype}')
        a = a.astype(float, copy=False)
    if a.ndim != len(shape) or any(s is not None and s != d for s, d in zip(shape, a.shape)):
        want = 'x'.join('?' if s is None else str(s) for s in shape) or 'scalar'
        raise InputError(f'{name}: expected shape ({want}), got {a.shape}')
    if a.dtype != object and not np.all(np.isfinite(a)):
        bad = np.argwhere(~np.isfinite(a))[0]
        raise InputError(f'{name}: contains NaN or infinity (first at index {tuple(int(i) for i in bad)})')
    return a


def vector(name, x, n):
    """A 1-D vector of length ``n`` (a column (n, 1) is accepted and flattened)."""
    if type(x) is _ndarray and x.shape == (n,) and x.dtype == _float and math.isfinite(x.sum()):
        return x
    a = np.asarray(x) if not isinstance(x, np.ndarray) else x
    if a.ndim == 2 and a.shape[1] == 1:
        a = a[:, 0]
    if a.ndim == 0 and n == 1:
        a = a.reshape(1)
    if a.ndim == 1 and a.shape[0] != n:
        raise InputError(f'{name}: expected length {n}, got length {a.shape[0]}')
    return array(name, a, (n,))


def link_id(name, i, robot):
    """A SPART link id 0..n."""
    if isinstance(i, str):
        return robot.link_index(i)
    try:
        k = int(i)
    except (TypeError, ValueError):
        raise InputError(f'{name}: expected a link id or name, got {i!r}') from None
    if k != i or not 0 <= k <= robot.n_links_joints:
        raise InputError(f'{name}: link id {i!r} out of range 0..{robot.n_links_joints}')
    return k


# Shapes of the SPART-named functions' array arguments, by argument name (n links, nq joint variables).
SHAPES = {
    'R0': lambda n, nq: (3, 3), 'r0': lambda n, nq: (3,), 'qm': lambda n, nq: (nq,),
    'u0': lambda n, nq: (6,), 'um': lambda n, nq: (nq,), 'u0dot': lambda n, nq: (6,),
    'umdot': lambda n, nq: (nq,), 'RL': lambda n, nq: (3, 3, n), 'rL': lambda n, nq: (3, n),
    'e': lambda n, nq: (3, n), 'g': lambda n, nq: (3, n), 'Bij': lambda n, nq: (6, 6, n, n),
    'Bi0': lambda n, nq: (6, 6, n), 'P0': lambda n, nq: (6, 6), 'pm': lambda n, nq: (6, n),
    't0': lambda n, nq: (6,), 'tL': lambda n, nq: (6, n), 't0dot': lambda n, nq: (6,),
    'tLdot': lambda n, nq: (6, n), 'rp': lambda n, nq: (3,), 'tp': lambda n, nq: (6,),
    'I0': lambda n, nq: (3, 3), 'Im': lambda n, nq: (3, 3, n), 'M0_tilde': lambda n, nq: (6, 6),
    'Mm_tilde': lambda n, nq: (6, 6, n), 'H0': lambda n, nq: (6, 6),
    'N': lambda n, nq: (6 + 6 * n, 6 + nq), 'Ndot': lambda n, nq: (6 + 6 * n, 6 + nq),
    'wF0': lambda n, nq: (6,), 'wFm': lambda n, nq: (6, n), 'tau0': lambda n, nq: (6,),
    'taum': lambda n, nq: (nq,), 'gravity': lambda n, nq: (3,), 'offset': lambda n, nq: (3,),
}


def checked(fn):
    """Decorator: check every array argument named in SHAPES once, at the entry.

    Shapes follow from ``robot`` (n, n_q); lists become arrays, (k, 1) columns
    become 1-D; a wrong shape or a NaN raises InputError naming the argument.
    Optional arguments left at None are not checked.
    """
    import functools
    import inspect
    sig = inspect.signature(fn)
    names = [p for p in sig.parameters if p in SHAPES]

    params = list(sig.parameters)
    robot_at = params.index('robot')
    plan = [(params.index(name), name, SHAPES[name]) for name in names]

    def check(name, x, shape_of, robot):
        shape = shape_of(robot.n_links_joints, robot.n_q)
        return vector(name, x, shape[0]) if len(shape) == 1 else array(name, x, shape)

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if kwargs or len(args) <= robot_at:  # keywords: bind by name (slower, same checks)
            bound = sig.bind(*args, **kwargs)
            a = bound.arguments
            for _, name, shape_of in plan:
                if a.get(name) is not None:
                    a[name] = check(name, a[name], shape_of, a['robot'])
            return fn(*bound.args, **bound.kwargs)
        args = list(args)
        robot = args[robot_at]
        for at, name, shape_of in plan:
            if at < len(args) and args[at] is not None:
                args[at] = check(name, args[at], shape_of, robot)
        return fn(*args)
    return wrapper
