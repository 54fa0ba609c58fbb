"""
Numeric/symbolic switch shared by the SPART-named functions.

SPART accepts MATLAB symbolic variables; here sympy expressions held in numpy
object arrays play that role.  Functions allocate their outputs with
``zeros(shape, like)`` so that one symbolic input makes every output symbolic,
and use ``cos``/``sin``/``sqrt`` from here, which pick math or sympy.
"""

import math

import numpy as np

_ndarray, _float, _object = np.ndarray, np.dtype(float), np.dtype(object)


def is_symbolic(*values):
    """Return True when any value is (or holds) a sympy expression."""
    for v in values:
        t = type(v)
        if t is _ndarray:  # the common case first: float arrays
            if v.dtype is _object or v.dtype == _object:
                return True
            continue
        if t is float or t is int:
            continue
        if getattr(v, 'symbolic', None) is True:  # a symbolic Robot
            return True
        if isinstance(v, np.ndarray):
            if v.dtype == object:
                return True
        elif not isinstance(v, (int, float, complex, np.number, bool, type(None))):
            if hasattr(v, 'free_symbols'):
                return True
            if isinstance(v, (list, tuple)) and is_symbolic(*v):
                return True
    return False


def dtype_for(*values):
    return object if is_symbolic(*values) else float


def zeros(shape, *like):
    """Zeros of float dtype, or object dtype when any of ``like`` is symbolic."""
    return np.zeros(shape, dtype=dtype_for(*like))


def eye(n, *like):
    return np.eye(n, dtype=dtype_for(*like))


def _sym(name):
    import sympy

    return getattr(sympy, name)


def cos(x):
    return _sym('cos')(x) if hasattr(x, 'free_symbols') else math.cos(x)


def sin(x):
    return _sym('sin')(x) if hasattr(x, 'free_symbols') else math.sin(x)


def sqrt(x):
    return _sym('sqrt')(x) if hasattr(x, 'free_symbols') else math.sqrt(x)


def as_array(x, *like):
    """``x`` as an array, object dtype kept, numbers as float."""
    a = np.asarray(x)
    if a.dtype == object or is_symbolic(*like):
        return a.astype(object) if a.dtype != object else a
    return a.astype(float, copy=False)
