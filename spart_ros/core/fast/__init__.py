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

State arguments are SPART's: R0 (3, 3) base CoM frame -> inertial, r0 (3,)
base CoM, qm (n_q,), u0 (6,) = [base angular velocity in the base frame; base
CoM velocity, inertial], um (n_q,); wrenches [torque; force] at CoMs in the
inertial frame; gravity (3,) in the inertial frame.  ``floating=False`` pins
the base (u0, u0dot ignored; tau0 is then the wrench the base mount carries).

Returned arrays are this object's buffers, overwritten by the next call of the
same method (no allocation on the hot path): copy them to keep them.
"""
import numpy as np

from ..errors import InputError, SingularModelError, ModelError
from ..model import FIXED
from . import kernels as K

__all__ = ['FastDynamics']


def _pack(robot):
    if robot.symbolic:
        raise ModelError(f'robot {robot.name!r} is symbolic: the fast path needs numeric masses and transforms')
    n = robot.n_links_joints
    mi = np.zeros(2 + 3 * n, dtype=np.int64)
    mi[0], mi[1] = n, robot.n_q
    mf = np.zeros((n + 1, K.MF_COLS))
    mf[0, K.MASS] = robot.base_link.mass
    mf[0, K.IBODY:K.IBODY + 9] = np.asarray(robot.base_link.inertia, float).ravel()
    for i, (link, joint) in enumerate(zip(robot.links, robot.joints), start=1):
        mi[2 + 3 * (i - 1):5 + 3 * (i - 1)] = (joint.parent_link, joint.type,
                                                joint.q_id - 1 if joint.type != FIXED else -1)
        mf[i, K.MASS] = link.mass
        mf[i, K.IBODY:K.IBODY + 9] = np.asarray(link.inertia, float).ravel()
        TJ, TL = np.asarray(joint.T, float), np.asarray(link.T, float)
        mf[i, K.TJR:K.TJR + 9] = TJ[:3, :3].ravel()
        mf[i, K.TJP:K.TJP + 3] = TJ[:3, 3]
        mf[i, K.TLR:K.TLR + 9] = TL[:3, :3].ravel()
        mf[i, K.TLP:K.TLP + 3] = TL[:3, 3]
        mf[i, K.AXIS:K.AXIS + 3] = np.asarray(joint.axis, float)
    return mi, mf


def _arr(x):
    return x if type(x) is np.ndarray else np.asarray(x, dtype=float)


def _arrays(*xs):
    """The inputs as arrays; a no-op (one type test each) when they already are."""
    for x in xs:
        if type(x) is not np.ndarray:
            return tuple(_arr(x) for x in xs)
    return xs


class FastDynamics:
    """Compiled dynamics of one robot; see the module docstring for the methods."""

    def __init__(self, robot):
        self.robot = robot
        self.n, self.n_q = robot.n_links_joints, robot.n_q
        n, nq = self.n, self.n_q
        self._mi, self._mf = _pack(robot)
        self._ws = np.zeros((n + 2, max(K.WS_COLS, 84)))
        z = np.zeros
        self._zero6, self._zero3, self._zero_wFm, self._zero_q = z(6), z(3), z((6, n)), z(nq)
        self._tau0, self._taum = z(6), z(nq)
        self._u0dot, self._umdot = z(6), z(nq)
        self._ftaum, self._fu0dot = z(6 + nq)[6:], z(6)
        self._H = z((6 + nq, 6 + nq))
        self._J, self._Jbias = z((6, 6 + nq)), z(6)
        self._rL, self._tL, self._com = z((3, n + 1)), z((6, n + 1)), z(6)

    # -- error decoding -------------------------------------------------------------------
    def _raise(self, code, args):
        if code == K.SINGULAR:
            raise SingularModelError(f'robot {self.robot.name!r}: singular inertia in this state '
                                     '(massless floating base, or a joint that moves no mass)')
        kind, k = divmod(code, 100)
        name = K.ARGUMENT_NAMES[k] if 0 < k < len(K.ARGUMENT_NAMES) else 'output'
        if kind * 100 == K.NOT_FINITE:
            raise InputError(f'{name}: contains NaN or infinity')
        expected = {'R0': '(3, 3)', 'r0': '(3,)', 'u0': '(6,)', 'u0dot': '(6,)', 'wF0': '(6,)', 'tau0': '(6,)',
                    'gravity': '(3,)', 'offset': '(3,)', 'qm': f'({self.n_q},)', 'um': f'({self.n_q},)',
                    'umdot': f'({self.n_q},)', 'taum': f'({self.n_q},)', 'wFm': f'(6, {self.n})',
                    'link': f'a link id 0..{self.n}'}.get(name, '?')
        got = args.get(name)
        got = np.shape(got) if got is not None and name != 'link' else got
        raise InputError(f'{name}: expected {expected}, got {got}')

    def _loads(self, wF0, wFm, gravity):
        use = wF0 is not None or wFm is not None or gravity is not None
        return (self._zero6 if wF0 is None else _arr(wF0), self._zero_wFm if wFm is None else _arr(wFm),
                self._zero3 if gravity is None else _arr(gravity), use)

    # -- algorithms -----------------------------------------------------------------------
    def inverse_dynamics(self, R0, r0, qm, u0, um, u0dot, umdot, wF0=None, wFm=None, gravity=None, floating=True):
        """(tau0 (6,), taum (n_q,)) realizing u0dot, umdot under the loads (SPART ID)."""
        R0, r0, qm, u0, um, u0dot, umdot = _arrays(R0, r0, qm, u0, um, u0dot, umdot)
        wF0, wFm, g, use = self._loads(wF0, wFm, gravity)
        code = K.rnea(self._mi, self._mf, self._ws, R0, r0, qm, u0, um, u0dot, umdot, wF0, wFm, g, floating,
                      True, use, self._tau0, self._taum)
        if code:
            self._raise(code, locals())
        return self._tau0, self._taum

    def bias_forces(self, R0, r0, qm, u0, um, wF0=None, wFm=None, gravity=None, floating=True):
        """Generalized forces at zero acceleration: C(q, u) u (minus N'w and gravity when given)."""
        R0, r0, qm, u0, um = _arrays(R0, r0, qm, u0, um)
        wF0, wFm, g, use = self._loads(wF0, wFm, gravity)
        code = K.rnea(self._mi, self._mf, self._ws, R0, r0, qm, u0, um, self._zero6, self._zero_q, wF0, wFm, g,
                      floating, False, use, self._tau0, self._taum)
        if code:
            self._raise(code, locals())
        return self._tau0, self._taum

    def gravity_forces(self, R0, r0, qm, gravity):
        """(g0 (6,), gm (n_q,)): the generalized forces that hold the robot still against gravity."""
        R0, r0, qm, gravity = _arrays(R0, r0, qm, gravity)
        code = K.rnea(self._mi, self._mf, self._ws, R0, r0, qm, self._zero6, self._zero_q, self._zero6,
                      self._zero_q, self._zero6, self._zero_wFm, gravity, False, False, True, self._tau0, self._taum)
        if code:
            self._raise(code, locals())
        return self._tau0, self._taum

    def floating_inverse_dynamics(self, R0, r0, qm, u0, um, umdot, wF0=None, wFm=None, gravity=None):
        """(taum (n_q,), u0dot (6,)) for joint accelerations umdot with the base free (tau0 = 0),
        O(n) (SPART Floating_ID)."""
        R0, r0, qm, u0, um, umdot = _arrays(R0, r0, qm, u0, um, umdot)
        wF0, wFm, g, use = self._loads(wF0, wFm, gravity)
        code = K.floating_rnea(self._mi, self._mf, self._ws, R0, r0, qm, u0, um, umdot, wF0, wFm, g, use,
                               self._ftaum, self._fu0dot)
        if code:
            self._raise(code, locals())
        return self._ftaum, self._fu0dot

    def forward_dynamics(self, R0, r0, qm, u0, um, tau0, taum, wF0=None, wFm=None, gravity=None, floating=True):
        """(u0dot (6,), umdot (n_q,)) under generalized forces tau0, taum and the loads, O(n)
        (SPART FD).  With floating=False the base stays still and u0dot = 0."""
        R0, r0, qm, u0, um, tau0, taum = _arrays(R0, r0, qm, u0, um, tau0, taum)
        wF0, wFm, g, use = self._loads(wF0, wFm, gravity)
        code = K.aba(self._mi, self._mf, self._ws, R0, r0, qm, u0, um, tau0, taum, wF0, wFm, g, floating, use,
                     self._u0dot, self._umdot)
        if code:
            self._raise(code, locals())
        return self._u0dot, self._umdot

    def mass_matrix(self, R0, r0, qm):
        """H (6 + n_q, 6 + n_q) for u = [u0; um] (SPART GIM); a fixed base uses H[6:, 6:]."""
        R0, r0, qm = _arrays(R0, r0, qm)
        code = K.crba(self._mi, self._mf, self._ws, R0, r0, qm, self._H)
        if code:
            self._raise(code, locals())
        return self._H

    def jacobian(self, link, R0, r0, qm, u0=None, um=None, offset=None, floating=True, bias=True):
        """(J (6, 6 + n_q), Jdot u (6,)) of a point on ``link`` (SPART id, 0 = base, or a name).

        ``offset`` (3,): the point from the link CoM, in the link CoM frame.  Rows are
        [angular velocity of the link; velocity of the point], inertial frame, so that
        t_p = J [u0; um] and d/dt t_p = J [u0dot; umdot] + Jdot u.  With
        floating=False the bias ignores u0 (the base columns stay in J).  bias=False
        skips the bias pass (the returned bias is then stale) for a cheaper call.
        """
        if isinstance(link, str):
            link = self.robot.link_index(link)
        R0, r0, qm = _arrays(R0, r0, qm)
        u0 = self._zero6 if u0 is None else _arr(u0)
        um = self._zero_q if um is None else _arr(um)
        offset = self._zero3 if offset is None else _arr(offset)
        code = K.point_jacobian(self._mi, self._mf, self._ws, R0, r0, qm, u0, um, int(link), offset, floating,
                                bias, self._J, self._Jbias)
        if code:
            self._raise(code, locals())
        return self._J, self._Jbias

    def twists(self, R0, r0, qm, u0, um, floating=True):
        """(rL (3, n + 1), tL (6, n + 1), com (6,)): CoM positions and twists [omega; CoM
        velocity] of the base (column 0) and links, and [system CoM; its velocity]."""
        R0, r0, qm, u0, um = _arrays(R0, r0, qm, u0, um)
        code = K.twists_and_com(self._mi, self._mf, self._ws, R0, r0, qm, u0, um, floating, self._rL, self._tL,
                                self._com)
        if code:
            self._raise(code, locals())
        return self._rL, self._tL, self._com
