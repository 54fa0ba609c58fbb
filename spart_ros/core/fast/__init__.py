"""Fast path: O(n) compiled dynamics for control loops, in SPART's conventions.

:class:`FastDynamics` wraps a :class:`~spart_ros.core.model.Robot` with packed
model arrays and a preallocated workspace (Pinocchio's Model/Data split) and
calls numba kernels (``kernels.py``, cached on disk) once per algorithm:

==========================  ==============================================  ===========
method                      computes                                         SPART twin
==========================  ==============================================  ===========
inverse_dynamics            tau0, taum (recursive Newton-Euler)              ID
floating_inverse_dynamics   taum, u0dot with tau0 = 0, O(n)                  Floating_ID
forward_dynamics            u0dot, umdot (articulated-body algorithm)        FD
mass_matrix                 H, (6 + n_q)^2 (composite rigid body)            GIM
bias_forces                 C(q, u) u (+ loads if given)                     CIM * u
gravity_forces              generalized forces that balance gravity
jacobian                    J (6, 6 + n_q) of a point and Jdot u             Jacob
twists                      CoM positions, twists, system CoM                Velocities
==========================  ==============================================  ===========

Gravity is a property of the object (``FastDynamics(robot, gravity=[0, 0, -9.81])`` or
``fd.gravity = ...``; zero by default, for space), used by every call that gives no
``gravity=`` of its own.  State arguments are SPART's: R0 (3, 3) base CoM frame -> inertial, r0 (3,)
base CoM, qm (n_q,), u0 (6,) = [base angular velocity in the base frame; base
CoM velocity, inertial], um (n_q,); wrenches [torque; force] at CoMs in the
inertial frame; gravity (3,) in the inertial frame.  ``floating=False`` pins
the base (u0, u0dot ignored; tau0 is then the wrench the base mount carries).

Returned arrays are this object's buffers, overwritten by the next call (the
dynamics methods share one output row): copy them to keep them.  Nothing is
allocated on the hot path.
"""
import threading
from functools import partial

import numpy as np
from numba.core.errors import NumbaError

from ..errors import InputError, SingularModelError, ModelError
from ..model import FIXED
from . import kernels as K

__all__ = ['FastDynamics']


def _pack(robot):
    """(mi, W): the tree as ints and a float array with the model in its rows (see kernels)."""
    if robot.symbolic:
        raise ModelError(f'robot {robot.name!r} is symbolic: the fast path needs numeric masses and transforms')
    n = robot.n_links_joints
    mi = np.zeros(2 + 3 * n, dtype=np.int64)
    mi[0], mi[1] = n, robot.n_q
    W = np.zeros((n + 3, max(K.COLS, 6 + robot.n_q)))
    W[0, K.MASS] = robot.base_link.mass
    W[0, K.IBODY:K.IBODY + 9] = np.asarray(robot.base_link.inertia, float).ravel()
    for i, (link, joint) in enumerate(zip(robot.links, robot.joints), start=1):
        mi[2 + 3 * (i - 1):5 + 3 * (i - 1)] = (joint.parent_link, joint.type,
                                                joint.q_id - 1 if joint.type != FIXED else -1)
        W[i, K.MASS] = link.mass
        W[i, K.IBODY:K.IBODY + 9] = np.asarray(link.inertia, float).ravel()
        TJ, TL = np.asarray(joint.T, float), np.asarray(link.T, float)
        W[i, K.TJR:K.TJR + 9] = TJ[:3, :3].ravel()
        W[i, K.TJP:K.TJP + 3] = TJ[:3, 3]
        W[i, K.TLR:K.TLR + 9] = TL[:3, :3].ravel()
        W[i, K.TLP:K.TLP + 3] = TL[:3, 3]
        W[i, K.AXIS:K.AXIS + 3] = np.asarray(joint.axis, float)
        W[i, K.TJR_IDENTITY] = float(np.array_equal(TJ[:3, :3], np.eye(3)))
        W[i, K.TLR_IDENTITY] = float(np.array_equal(TL[:3, :3], np.eye(3)))
    return mi, W


# The entry kernels run only for the argument types they were compiled for (loaded from the
# disk cache, or compiled, on first use).  A call with other types takes the slow path below
# instead of numba compiling on the spot: lists would otherwise cost a failed compilation
# (~0.2 s) on every call, since the kernels run without numba's runtime (see kernels.py).
_ENTRY_KERNELS = (K.rnea, K.floating_rnea, K.aba, K.crba, K.jacobian, K.jacobian_and_bias, K.twists_and_com)
# (Dispatcher.disable_compile() refuses a dispatcher with no signature yet, so the flag it
# sets is set directly; the pinned numba has it.)
for _kernel in _ENTRY_KERNELS:
    _kernel._can_compile = False
_compile_lock = threading.Lock()


def _convert(x):
    """Lists, tuples and non-float64 arrays -> float64 arrays; anything else unchanged."""
    if isinstance(x, (list, tuple)) or (isinstance(x, np.ndarray) and x.dtype != np.float64):
        try:
            return np.ascontiguousarray(x, dtype=float)
        except (TypeError, ValueError) as error:
            raise InputError(f'expected numeric arrays, got {x!r}: {error}') from None
    return x


def _call_new_types(bound, args):
    """First call with these argument types: convert lists, then load or compile the kernel
    for the resulting types (once per process; cached on disk)."""
    args = [_convert(a) for a in args]
    try:
        return bound(*args)
    except TypeError:
        pass
    kernel = bound.func
    with _compile_lock:
        kernel._can_compile = True
        try:
            return bound(*args)
        except NumbaError as error:
            types = ', '.join(type(a).__name__ if not isinstance(a, np.ndarray) else f'{a.dtype}{a.shape}'
                              for a in args)
            raise InputError(f'{kernel.__name__}: unsupported argument types ({types})') from error
        finally:
            kernel._can_compile = False


class FastDynamics:
    """Compiled dynamics of one robot; see the module docstring for the methods.

    Pass float64 arrays, C-contiguous for the fastest call: lists and int arrays are
    converted on every call, other layouts (e.g. a transposed R0) are compiled for once.
    """

    def __init__(self, robot, gravity=None):
        self.robot = robot
        self.n, self.n_q = robot.n_links_joints, robot.n_q
        n, nq = self.n, self.n_q
        mi, W = _pack(robot)
        self._mi, self._W = mi, W.copy()
        out = self._W[n + 2]
        self._base_out, self._joint_out = out[0:6], out[6:6 + nq]
        z = np.zeros
        self._zero6, self._zero3, self._zero_wFm, self._zero_q = z(6), z(3), z((6, n)), z(nq)
        self._H = z((6 + nq, 6 + nq))
        self._J, self._Jbias = z((6, 6 + nq)), z(6)
        self._rL, self._tL, self._com = z((3, n + 1)), z((6, n + 1)), z(6)
        bind = lambda kernel: partial(kernel, mi, self._W)  # noqa: E731
        self._rnea, self._floating_rnea, self._aba = bind(K.rnea), bind(K.floating_rnea), bind(K.aba)
        self._crba, self._twists = bind(K.crba), bind(K.twists_and_com)
        self._jacobian, self._jacobian_and_bias = bind(K.jacobian), bind(K.jacobian_and_bias)
        self._gravity = self._W[0, K.GRAVITY:K.GRAVITY + 3]
        if gravity is not None:
            self.gravity = gravity

    @property
    def gravity(self):
        """The model's gravity (3,), inertial frame [m/s^2], used when a call gives none
        (default zero: space).  Set it once, like Pinocchio's ``model.gravity``."""
        return self._gravity.copy()

    @gravity.setter
    def gravity(self, g):
        g = np.asarray(g, dtype=float)
        if g.shape != (3,) or not np.all(np.isfinite(g)):
            raise InputError(f'gravity: expected 3 finite numbers, got {g!r}')
        self._gravity[:] = g

    # -- plumbing -------------------------------------------------------------------------
    def _call(self, kernel, *args):
        """Run a kernel (new argument types take the slow path once); raise on an error code."""
        try:
            code = kernel(*args)
        except (TypeError, NumbaError):     # NumbaError: a numba that compiled a list anyway
            code = _call_new_types(kernel, args)
        if code:
            self._raise(code)

    def _raise(self, code):
        if code == K.SINGULAR:
            raise SingularModelError(f'robot {self.robot.name!r}: singular inertia in this state (a point mass on a '
                                     'joint axis, or a joint that moves no mass)')
        kind, k = divmod(code, 100)
        name = K.ARGUMENT_NAMES[k] if 0 < k < len(K.ARGUMENT_NAMES) else 'output'
        if kind * 100 == K.NOT_FINITE:
            raise InputError(f'{name}: contains NaN or infinity')
        expected = {'R0': '(3, 3)', 'r0': '(3,)', 'u0': '(6,)', 'u0dot': '(6,)', 'wF0': '(6,)', 'tau0': '(6,)',
                    'gravity': '(3,)', 'offset': '(3,)', 'qm': f'({self.n_q},)', 'um': f'({self.n_q},)',
                    'umdot': f'({self.n_q},)', 'taum': f'({self.n_q},)', 'wFm': f'(6, {self.n})',
                    'link': f'a link id 0..{self.n}'}.get(name, '?')
        raise InputError(f'{name}: expected shape {expected}')

    def _wrenches(self, wF0, wFm):
        """Both wrench arrays (zeros for the missing one) once either is given."""
        return self._zero6 if wF0 is None else wF0, self._zero_wFm if wFm is None else wFm

    # -- algorithms -----------------------------------------------------------------------
    def inverse_dynamics(self, R0, r0, qm, u0, um, u0dot, umdot, wF0=None, wFm=None, gravity=None, floating=True):
        """(tau0 (6,), taum (n_q,)) realizing u0dot, umdot under the loads (SPART ID)."""
        if wF0 is not None or wFm is not None:
            wF0, wFm = self._wrenches(wF0, wFm)
        self._call(self._rnea, R0, r0, qm, u0, um, u0dot, umdot, wF0, wFm, gravity, floating)
        return self._base_out, self._joint_out

    def bias_forces(self, R0, r0, qm, u0, um, wF0=None, wFm=None, gravity=None, floating=True):
        """Generalized forces at zero acceleration: C(q, u) u (minus N'w and gravity when given)."""
        if wF0 is not None or wFm is not None:
            wF0, wFm = self._wrenches(wF0, wFm)
        self._call(self._rnea, R0, r0, qm, u0, um, None, None, wF0, wFm, gravity, floating)
        return self._base_out, self._joint_out

    def gravity_forces(self, R0, r0, qm, gravity=None):
        """(g0 (6,), gm (n_q,)): the generalized forces that hold the robot still against gravity
        (``gravity`` (3,), or the model's)."""
        self._call(self._rnea, R0, r0, qm, self._zero6, self._zero_q, None, None, None, None, gravity, False)
        return self._base_out, self._joint_out

    def floating_inverse_dynamics(self, R0, r0, qm, u0, um, umdot, wF0=None, wFm=None, gravity=None):
        """(taum (n_q,), u0dot (6,)) for joint accelerations umdot with the base free (tau0 = 0),
        O(n) (SPART Floating_ID)."""
        self.robot.check_invertible(True, base_only=True)   # names what has no mass (cached)
        if wF0 is not None or wFm is not None:
            wF0, wFm = self._wrenches(wF0, wFm)
        self._call(self._floating_rnea, R0, r0, qm, u0, um, umdot, wF0, wFm, gravity)
        return self._joint_out, self._base_out

    def forward_dynamics(self, R0, r0, qm, u0, um, tau0, taum, wF0=None, wFm=None, gravity=None, floating=True):
        """(u0dot (6,), umdot (n_q,)) under generalized forces tau0, taum and the loads, O(n)
        (SPART FD).  With floating=False the base stays still and u0dot = 0."""
        self.robot.check_invertible(floating)               # names what has no mass (cached)
        if wF0 is not None or wFm is not None:
            wF0, wFm = self._wrenches(wF0, wFm)
        self._call(self._aba, R0, r0, qm, u0, um, tau0, taum, wF0, wFm, gravity, floating)
        return self._base_out, self._joint_out

    def mass_matrix(self, R0, r0, qm):
        """H (6 + n_q, 6 + n_q) for u = [u0; um] (SPART GIM); a fixed base uses H[6:, 6:]."""
        self._call(self._crba, R0, r0, qm, self._H)
        return self._H

    def jacobian(self, link, R0, r0, qm, u0=None, um=None, offset=None, floating=True, bias=True):
        """(J (6, 6 + n_q), Jdot u (6,)) of a point on ``link`` (SPART id, 0 = base, or a name).

        ``offset`` (3,): the point from the link CoM, in the link CoM frame.  Rows are
        [angular velocity of the link; velocity of the point], inertial frame, so that
        t_p = J [u0; um] and d/dt t_p = J [u0dot; umdot] + Jdot u.  With floating=False
        the bias ignores u0 (the base columns stay in J).  bias=False skips the bias pass
        (the returned bias is then stale) for a cheaper call; u0 and um may then be None.
        """
        if type(link) is str:
            link = self.robot.link_index(link)
        if offset is None:
            offset = self._zero3
        if not bias:
            self._call(self._jacobian, R0, r0, qm, link, offset, self._J)
            return self._J, self._Jbias
        self._call(self._jacobian_and_bias, R0, r0, qm, self._zero6 if u0 is None else u0,
                   self._zero_q if um is None else um, link, offset, floating, self._J, self._Jbias)
        return self._J, self._Jbias

    def twists(self, R0, r0, qm, u0, um, floating=True):
        """(rL (3, n + 1), tL (6, n + 1), com (6,)): CoM positions and twists [omega; CoM
        velocity] of the base (column 0) and links, and [system CoM; its velocity]."""
        self._call(self._twists, R0, r0, qm, u0, um, floating, self._rL, self._tL, self._com)
        return self._rL, self._tL, self._com
