"""
Argument checks of values, done once at each public entry (Pinocchio's style): one boundary layer.

Every public function of ``spart_ros.core``, ``spart_ros.spart``,
``FastDynamics`` and ``spart_ros.control`` checks its arguments here (FastDynamics: in its kernels
where
that is nearly free, here for the rest) and raises :class:`InputError` with a
message that starts with the argument's name, then says what was expected and
what was given, so that a ROS node can pass it on unchanged.  The rules:

- arrays: real numbers (ints or floats; complex, bool, strings and None are
  errors), exactly the expected shape (a (k, 1) column is accepted for a
  vector of length k), every entry finite.  Numeric arrays come out as
  C-ordered float64 arrays (a transposed, sliced or integer array is copied once; a
  read-only one is returned as it is: no function writes into its inputs).
  Object arrays keep their dtype (the symbolic path, where a function has one: numpy code
  on sympy expressions, or on plain numbers as a reference for the compiled code); their
  entries must be sympy expressions or finite real numbers.  Functions that need numbers
  (a linear solve, an SVD) convert object arrays of numbers and refuse symbols with an
  InputError naming the argument (:func:`numeric`; ``checked(solves=True)``).  A Python int
  beyond the float range is an error, not an OverflowError.
- rotation matrices (R0, RL, DCMs): every entry of R'R - I at most
  ``ROTATION_TOL`` (1e-3) in magnitude and det R > 0, used as given (not re-orthonormalized):
  a float32 round trip or an integrator's intermediate stage passes, a scale, shear or
  reflection of 0.1 % or more does not.
- quaternions and rotation axes: non-zero; normalized when
  ``| |q|^2 - 1 | <= QUATERNION_TOL`` (0.01, the test tf2 applies to ROS
  quaternions), an error beyond.
- link ids: ints (Python or numpy, not bool) in 0..n, or link names (of any robot model:
  only ``n_links_joints`` and ``link_index`` are used).
- results: finite.  A computation that overflows raises :class:`ResultNotFinite`,
  which :func:`results` (and the SPART-named functions' decorator,
  :func:`spart_ros.core._checks.checked`) turns into an InputError naming the largest inputs (or a
  ModelError naming the robot when only its model is that large).  Numpy's overflow
  warnings are silenced where an overflow is expected and reported (:func:`quiet`).

Symbolic arguments get the shape checks only (their values are unknown).

This module knows no robot model (robots are checked by :mod:`spart_ros.core._checks`), so that
the model itself (:mod:`spart_ros.core.model`) checks its values with it.
"""

import functools
from functools import partial
import math
import numbers

import numpy as np

from .errors import InputError, ModelError
from ..native import compiled as _native
from ..native.layout import ROTATION_TOL

#: | |q|^2 - 1 | up to which a quaternion (or an axis) is normalized; beyond, an error.
QUATERNION_TOL = 0.01
#: Inputs above this magnitude are named first when a result overflows (its square overflows).
_HUGE = 1e150

_ndarray, _float = np.ndarray, np.dtype(np.float64)
# compiled checks of a float64 array by its number of dimensions (1 to 4): finite and C-ordered
_FINITE_C = (None, _native.finite_c1, _native.finite_c2, _native.finite_c3, _native.finite_c4)
_first_rotation2, _first_rotation3 = _native.first_non_rotation2, _native.first_non_rotation3


def _all_finite(a):
    """
    Return True if the float64 array ``a`` is C-ordered and every entry finite.

    False if either is not (the caller then copies it to C order and asks again).
    """
    nd = a.ndim
    if 0 < nd < 5:
        return _FINITE_C[nd](a)
    return bool(a.flags.c_contiguous and np.all(np.isfinite(a)))


class ResultNotFinite(InputError):
    """
    A result overflowed (inf or NaN from finite inputs).

    Raised inside a computation; :func:`checked` re-raises it as an InputError naming the inputs.
    """


# --- messages --------------------------------------------------------------------------------


def _shape_text(shape):
    if not shape:
        return 'a scalar'
    dims = ['?' if s is None else str(s) for s in shape]
    return '(' + ', '.join(dims) + (',)' if len(dims) == 1 else ')')


def given(x):
    """
    Return a short description of the value ``x`` for a message.

    Numbers as numbers, not numpy reprs.
    """
    if x is None:
        return 'None'
    if isinstance(x, np.ndarray):
        return f'an array of shape {x.shape} and dtype {x.dtype}'
    if isinstance(x, np.generic):
        text = repr(x.item())  # np.float64(2.5) -> 2.5
    elif isinstance(x, int) and not isinstance(x, bool) and x.bit_length() > 64:
        return _big_int(x)
    else:
        text = repr(x)
    return f'{type(x).__name__} {text[:60]}{"..." if len(text) > 60 else ""}'


def _big_int(x):
    """Return an int too long to print (repr fails beyond 4300 digits), described."""
    return f'{"a negative" if x < 0 else "an"} integer of {x.bit_length()} bits'


class _Quiet:
    """
    Numpy's overflow and invalid-value warnings off inside ``with quiet():``.

    See :func:`quiet`.
    """

    __slots__ = ('_token',)

    def __enter__(self):
        self._token = _set_state(_QUIET_STATE)

    def __exit__(self, *exc):
        _reset_state(self._token)


_QUIET = {
    'divide': 'warn',
    'over': 'ignore',
    'under': 'ignore',
    'invalid': 'ignore',
}  # numpy's defaults, but

try:  # numpy >= 2 keeps its error state in a context variable
    from numpy._core._ufunc_config import _extobj_contextvar

    with np.errstate(**_QUIET):
        _QUIET_STATE = _extobj_contextvar.get()
    _set_state, _reset_state = _extobj_contextvar.set, _extobj_contextvar.reset
    quiet = _Quiet
    _quiet_on, _quiet_off = partial(_set_state, _QUIET_STATE), _reset_state
except (ImportError, AttributeError):  # elsewhere: the public (slower) way

    def quiet():
        return np.errstate(**_QUIET)

    def _quiet_on():
        state = quiet()
        state.__enter__()
        return state

    def _quiet_off(state):
        state.__exit__(None, None, None)


quiet.__doc__ = """``with quiet():`` numpy's overflow and invalid-value warnings off, where the
caller checks the result and names the inputs instead of letting numpy warn.  (np.errstate costs
~1.2 us, a fifth of a small checked call; setting numpy's error-state context variable
directly ~0.3 us.)"""


def quietly(fn):
    """
    Run ``fn`` under :func:`quiet` (decorator; ``fn`` checks its results itself).

    The caller's numpy error state (``np.seterr``, ``np.errstate``) is restored exactly on return
    and on an exception (numpy >= 2: the context variable is reset to its value before).
    """

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        token = _quiet_on()
        try:
            return fn(*args, **kwargs)
        finally:
            _quiet_off(token)

    return wrapper


# --- values ----------------------------------------------------------------------------------


def _object_entries(name, a):
    """Entries of an object array: sympy expressions, or finite real numbers."""
    for index, e in np.ndenumerate(a):
        where = f'entry {index}' if a.ndim else 'the value'
        if hasattr(e, 'free_symbols'):  # sympy
            if getattr(e, 'is_Atom', False):
                if (e.is_Number and e.is_finite is not True) or e.is_finite is False:
                    raise InputError(f'{name}: {where} is {e}, not a finite number')
                if e.is_real is False:
                    raise InputError(
                        f'{name}: {where} is {e}: expected real numbers, got a complex value'
                    )
            continue
        if isinstance(e, (bool, np.bool_)) or not isinstance(e, numbers.Number):
            raise InputError(f'{name}: {where} is {given(e)}, not a number')
        if not isinstance(e, numbers.Real):
            raise InputError(
                f'{name}: {where} is {e!r}: expected real numbers, got a complex value'
            )
        try:
            finite = math.isfinite(e)
        except OverflowError:  # a Python int beyond the float range
            raise InputError(f'{name}: {where} is {given(e)}, too large for a float') from None
        if not finite:
            raise InputError(f'{name}: contains NaN or infinity (first at index {index})')


def _as_array(name, x, what):
    """
    ``x`` as an array of real numbers (or sympy expressions); InputError naming ``name``.

    ``what`` (the expectation, for messages) may be a shape tuple.
    """
    if type(x) is _ndarray and x.dtype.kind in 'fiu':
        return x
    if isinstance(what, tuple):
        what = f'an array of shape {_shape_text(what)}'
    if x is None:
        raise InputError(f'{name}: expected {what}, got None')
    if isinstance(x, (str, bytes, dict, set)):
        raise InputError(f'{name}: expected {what}, got {given(x)}')
    try:
        a = np.asarray(x)
    except (ValueError, TypeError) as err:  # ragged nesting and the like
        reason = (
            'rows of different lengths'
            if 'inhomogeneous' in str(err) or 'sequence' in str(err)
            else err
        )
        raise InputError(
            f'{name}: expected {what}, got {given(x)}: not an array of numbers ({reason})'
        ) from None
    kind = a.dtype.kind
    if kind in 'fiu':
        return a
    if kind == 'c':
        raise InputError(f'{name}: expected real numbers, got complex values (dtype {a.dtype})')
    if kind == 'b':
        raise InputError(f'{name}: expected real numbers, got booleans')
    if kind == 'O':
        _object_entries(name, a)
        return a
    raise InputError(f'{name}: expected {what} of real numbers, got {given(x)}')


def _float_c(a):
    """Return a C-ordered, writable float64 version of a real array (a copy only when needed)."""
    if a.dtype is not _float or not a.flags.c_contiguous or not a.flags.writeable:
        a = np.array(a, dtype=np.float64, order='C')
    return a


def _finite(name, a):
    """Return ``a`` (a C-ordered float64 array) if every entry is finite; InputError otherwise."""
    if _all_finite(a):
        return a
    bad = np.argwhere(~np.isfinite(a))[0]
    raise InputError(
        f'{name}: contains NaN or infinity (first at index {tuple(int(i) for i in bad)})'
    )


def _shaped(name, a, shape):
    """
    Return the real array ``a`` checked for ``shape``.

    Converted and checked for finite values.
    """
    if a.shape != shape and (
        a.ndim != len(shape) or any(s is not None and s != d for s, d in zip(shape, a.shape))
    ):
        raise InputError(f'{name}: expected shape {_shape_text(shape)}, got {a.shape}')
    if a.dtype == object:
        return a
    return _finite(name, _float_c(a))


def _array(name, x, shape):
    return _shaped(name, _as_array(name, x, shape), shape)


def array(name, x, shape):
    """
    Return ``x`` as an array of exactly ``shape`` (ints; None = any).

    A C-ordered float64 array, or an object array if symbolic. InputError naming ``name``
    otherwise.
    """
    if type(x) is _ndarray and x.dtype is _float and x.shape == shape and _all_finite(x):
        return x
    return _array(name, x, shape)


def vector(name, x, n):
    """
    Return ``x`` as a 1-D vector of length ``n`` (a column (n, 1) is flattened).

    ``name``: the argument's name, which an InputError starts with (every function here).
    """
    if type(x) is _ndarray and x.dtype is _float and x.shape == (n,) and _FINITE_C[1](x):
        return x
    a = _as_array(name, x, f'a vector of length {n}')
    if a.ndim == 2 and a.shape[1] == 1:
        a = a[:, 0]
    elif a.ndim == 0 and n == 1:
        a = a.reshape(1)
    if a.ndim == 1 and a.shape[0] != n:
        raise InputError(f'{name}: expected length {n}, got length {a.shape[0]}')
    return _shaped(name, a, (n,))


def scalar(name, x):
    """Return ``x`` as a finite float, or a sympy expression unchanged; ``name``: its name."""
    if type(x) is float and math.isfinite(x):
        return x
    if hasattr(x, 'free_symbols'):
        _object_entries(name, np.array([x], dtype=object))
        return x
    a = _as_array(name, x, 'a real number')
    if a.ndim != 0:
        raise InputError(f'{name}: expected a real number, got {given(x)}')
    if a.dtype == object:
        v = a.item()
        return v if hasattr(v, 'free_symbols') else float(v)
    v = float(a)
    if not math.isfinite(v):
        raise InputError(f'{name}: expected a finite number, got {v}')
    return v


def nonnegative(name, x, infinite=False):
    """
    Return ``x`` as a float if it is a finite real number >= 0.

    ``infinite=True``: +inf too; real numbers as :func:`scalar` takes them. InputError naming
    ``name`` otherwise.
    """
    if infinite and isinstance(x, numbers.Real) and x == math.inf:
        return math.inf
    v = scalar(name, x)
    if not (type(v) is float and v >= 0):
        raise InputError(
            f'{name}: expected a {"" if infinite else "finite "}number >= 0, got {given(x)}'
        )
    return v


def flag(name, x):
    """
    Return ``x`` as a bool (``name``: its name, for the error).

    True, False, a numpy bool or a real number (its truth value, as ``if x`` would take it, and as
    the compiled kernels convert numbers); InputError for anything else (None, 'yes', a list...).
    """
    if x is True or x is False:
        return x
    if isinstance(x, (np.bool_, numbers.Real)):
        return bool(x)
    raise InputError(f'{name}: expected True or False, got {given(x)}')


# --- rotations and quaternions ----------------------------------------------------------------


def has_symbols(a):
    """
    Return True if an entry of the array ``a`` holds a sympy symbol (non-empty free_symbols).

    An object array of plain numbers (Python or sympy: 2, Rational(1, 2), sqrt(2)) has known
    values: they are checked as numbers (``model.model_array`` keeps sympy numbers exact).
    """
    return a.dtype == object and any(getattr(e, 'free_symbols', None) for e in a.flat)


def _rotation_error(name, R):
    big = float(np.abs(R).max())
    if big > 1e150:  # R'R overflows: say what is wrong instead
        return InputError(
            f"{name}: expected a rotation matrix, got entries up to {big:.3g} (a rotation's "
            'entries are at most 1 in magnitude)'
        )
    RtR = R.T @ R
    dev = float(np.abs(RtR - np.eye(3)).max())
    det = float(np.linalg.det(R))
    return InputError(
        f"{name}: expected a rotation matrix (every entry of R'R - I within {ROTATION_TOL:g}, "
        f"det R > 0), got max |R'R - I| = {dev:.3g}, det R = {det:.6g}"
    )


def rotation(name, R):
    """
    Return ``R`` as a (3, 3) rotation matrix (see the module docstring); ``name``: its name.

    C-ordered float64, or an object array (sympy) whose orthonormality is checked only if it holds
    no symbols.
    """
    if (
        type(R) is _ndarray
        and R.dtype is _float
        and R.shape == (3, 3)
        and _first_rotation2(R) == -1
    ):
        return R
    a = _array(name, R, (3, 3))
    if a.dtype == object:
        if not has_symbols(a):
            rotation(name, a.astype(float))
        return a
    if _first_rotation2(a) >= 0:
        raise _rotation_error(name, a)
    return a


def rotations(name, RL, n):
    """Return ``RL`` as a (3, 3, n) stack of rotation matrices; ``name``: its name."""
    if (
        type(RL) is _ndarray
        and RL.dtype is _float
        and RL.shape == (3, 3, n)
        and _first_rotation3(RL) == -1
    ):
        return RL
    a = _array(name, RL, (3, 3, n))
    if a.dtype == object:
        if not has_symbols(a):
            rotations(name, a.astype(float), n)
        return a
    k = _first_rotation3(a)
    if k >= 0:
        raise _rotation_error(f'{name}[:, :, {k}]', a[:, :, k])
    return a


def unit_vector(name, x, n, what):
    """
    Return ``x`` as a length-``n`` vector of unit norm (``name``: its name; ``what``: its kind).

    Normalized when ``1e-12 < | |x|^2 - 1 | <= QUATERNION_TOL`` (returned as given when already
    unit to
    rounding), InputError when zero or farther from unit. Symbolic vectors are returned unchanged.
    """
    a = vector(name, x, n)
    if a.dtype == object:
        return a
    n2 = math.fsum(v * v for v in a.tolist())
    if n2 == 0.0:
        raise InputError(f'{name}: expected a {what}, got zero')
    if abs(n2 - 1.0) > QUATERNION_TOL:
        raise InputError(
            f'{name}: expected a {what}, got norm {math.sqrt(n2):.6g} (accepted: | |x|^2 - 1 | <= '
            f'{QUATERNION_TOL:g}, then normalized)'
        )
    return a if abs(n2 - 1.0) <= 1e-12 else a / math.sqrt(n2)  # unit to rounding: kept bit for bit


def quaternion(name, q):
    """Return ``q`` as a quaternion [x, y, z, w] (scalar last), normalized; ``name``: its name."""
    return unit_vector(name, q, 4, 'unit quaternion [x, y, z, w]')


# --- link ids --------------------------------------------------------------------------------


def link_id(name, i, robot):
    """
    Return the SPART link id of ``i``: an id 0..n (a Python or numpy integer), or a link name.

    ModelError if unknown.
    """
    if isinstance(i, str):
        try:
            return robot.link_index(i)
        except ModelError as err:
            raise InputError(f'{name}: {err}') from None
    if isinstance(i, (bool, np.bool_)) or not isinstance(i, (int, np.integer)):
        raise InputError(
            f'{name}: expected a link id (an integer 0..{robot.n_links_joints}) or a link name, '
            f'got {given(i)}'
        )
    i = int(i)  # a numpy int too (np.uint64 beyond int64 included)
    if not 0 <= i <= robot.n_links_joints:
        shown = i if abs(i) < 2**63 else f'({_big_int(i)})'
        raise InputError(f'{name}: link id {shown} out of range 0..{robot.n_links_joints}')
    return i


def numeric(name, a, where):
    """
    Return the checked array ``a`` if it holds numbers (a float array).

    InputError naming ``name`` if it is symbolic: ``where`` (a linear solve, an SVD...) needs
    numbers.
    """
    if a.dtype != object:
        return a
    try:
        return np.array(a, dtype=np.float64)
    except (TypeError, ValueError):
        raise InputError(f'{name}: {where} needs numbers, got symbolic values') from None


# --- results ---------------------------------------------------------------------------------


def _magnitude(v):
    try:
        a = np.asarray(v, dtype=float)
    except (TypeError, ValueError):
        return None
    if a.size == 0:
        return 0.0
    a = np.abs(a[np.isfinite(a)])
    return float(a.max()) if a.size else None


def huge(inputs):
    """
    Return True if one of the (name, value) ``inputs`` has an entry above 1e150 in magnitude.

    Its square overflows: a failure on such inputs is an overflow, not a property of the model.
    """
    return any((m := _magnitude(v)) is not None and m > _HUGE for _, v in inputs)


def overflow_error(where, inputs, robot=None):
    """
    Return the error for a result of ``where`` that is not finite although the ``inputs`` are.

    ``inputs``: (name, value) pairs. An InputError naming the inputs above 1e150 (else the
    largest); a ModelError naming the robot and its element when only the model (``robot``) holds
    values that large.
    """
    sizes = sorted(
        ((m, name) for name, v in inputs if (m := _magnitude(v)) is not None), reverse=True
    )
    names = [name for m, name in sizes if m > _HUGE]
    listing = ', '.join(f'{name} {m:.3g}' for m, name in sizes[:6])
    if not names and robot is not None:
        m, what = robot.model_scale()
        if m > _HUGE:
            return ModelError(
                f'robot {robot.name!r}: too large: {what} holds values up to {m:.3g}, so the '
                f'result of {where} is not finite (overflow); largest magnitudes of the inputs: '
                f'{listing}'
            )
    names = names or [name for _, name in sizes[:1]] or ['inputs']
    return InputError(
        f'{", ".join(names)}: too large: the result of {where} is not finite (overflow); largest '
        f'magnitudes of the inputs: {listing}'
    )


def _results_finite(out):
    """
    Raise ResultNotFinite if a float array in ``out`` is not finite.

    ``out``: an array or a tuple of them.
    """
    for a in out if isinstance(out, tuple) else (out,):
        if type(a) is _ndarray and a.dtype is _float:
            # (a non-contiguous view, a block of a bigger result, is checked by numpy)
            ok = _all_finite(a) or not a.flags.c_contiguous and bool(np.all(np.isfinite(a)))
            if not ok:
                raise ResultNotFinite('result not finite')


def results(where, out, inputs):
    """
    Return ``out`` (an array or a tuple of them) if finite; ``where``: the function computing it.

    Else an InputError naming the largest of ``inputs`` ((name, value) pairs), see
    :func:`overflow_error`.
    """
    try:
        _results_finite(out)
    except ResultNotFinite:
        raise overflow_error(where, inputs) from None
    return out
