"""
Analytic derivatives of the dynamics on the compiled fast path, in SPART's coordinates.

:class:`DynamicsDerivatives` is a workspace on a :class:`~spart_ros.core.fast.FastDynamics`'
model (its robot, gravity and joint dynamics) that returns, in one compiled call
(:mod:`spart_ros.native.derivatives`):

==========================  ===============================================================
method                      returns (views of this object's buffers)
==========================  ===============================================================
inverse_dynamics            tau, d tau / d q, d tau / d u, H = d tau / d udot
forward_dynamics            udot, d udot / d q, d udot / d u, H^-1 = d udot / d tau
momentum                    h0 = H[0:6] u, d h0 / d q, d h0 / d u = H[0:6]
==========================  ===============================================================

**Coordinates and layout.**  Every vector is SPART's [base (6); joints (n_q)] and every matrix
(6 + n_q) x (6 + n_q): rows are the outputs (tau = [tau0; taum], udot = [u0dot; umdot]), columns
the inputs.  The configuration q = (R0, r0, qm) is differentiated along its tangent, ordered and
expressed like u = [u0; um] (so that dq/dt = u): column 0..2 a rotation of the base about its
CoM by ``R0 -> R0 exp([dtheta]x)`` (dtheta in the base CoM frame, like u0[0:3]), columns 3..5 a
move of the base CoM by dr0 (inertial frame, like u0[3:6]), then one column per joint variable.
So the first-order change of ID under a state change (dtheta, dr0, dqm; du; dudot) is
``dtau_dq @ [dtheta; dr0; dqm] + dtau_du @ du + H @ dudot``.

A fixed base (``floating=False``): the base columns are zero; for forward dynamics only the joint
block [6:, 6:] is filled (u0dot = 0); for inverse dynamics the base rows hold the derivatives of
tau0, the wrench the base mount carries, and H only its joint block.  Gravity is the model's
(:attr:`FastDynamics.gravity`); with ``joint_dynamics`` the joints' damping and smoothed friction
enter d tau / d u and their armature H (as they enter the fast path's ID and FD).  External loads
are not taken (the fast path's ``wF0``, ``wFm``).

Checked against Pinocchio's ``computeRNEADerivatives`` / ``computeABADerivatives`` (mapped to
SPART's coordinates) and central finite differences in ``test/test_derivatives.py``.  The
outputs are this object's arrays, overwritten by the next call of the same method (copy to keep).
"""

from collections import namedtuple

import numpy as np

from .. import checks as chk
from ..errors import InputError
from ...native import compiled as N
from ...native import derivatives as DL
from ...native import layout as L

__all__ = [
    'DynamicsDerivatives',
    'InverseDynamicsDerivatives',
    'ForwardDynamicsDerivatives',
    'MomentumDerivatives',
]

InverseDynamicsDerivatives = namedtuple(
    'InverseDynamicsDerivatives', 'tau dtau_dq dtau_du dtau_dudot'
)
InverseDynamicsDerivatives.__doc__ = """Inverse dynamics at a state and its derivatives.

``tau`` (6 + n_q,) = [tau0; taum]; ``dtau_dq``, ``dtau_du``, ``dtau_dudot`` (= H) (6 + n_q,
6 + n_q); module docstring for the coordinates."""

ForwardDynamicsDerivatives = namedtuple(
    'ForwardDynamicsDerivatives', 'udot dudot_dq dudot_du dudot_dtau'
)
ForwardDynamicsDerivatives.__doc__ = """Forward dynamics at a state and its derivatives.

``udot`` (6 + n_q,) = [u0dot; umdot]; ``dudot_dq``, ``dudot_du``, ``dudot_dtau`` (= H^-1)
(6 + n_q, 6 + n_q); module docstring for the coordinates."""

MomentumDerivatives = namedtuple('MomentumDerivatives', 'h0 dh0_dq dh0_du')
MomentumDerivatives.__doc__ = """SPART's system momentum h0 = H[0:6] u and its derivatives.

``h0`` (6,) = P0' [L_r0; p] (:mod:`spart_ros.core.momentum`), ``dh0_dq``, ``dh0_du`` (6,
6 + n_q)."""

_K_ID, _K_FD = N.KINDS['rnea_derivatives'], N.KINDS['aba_derivatives']


class DynamicsDerivatives:
    """
    Analytic derivatives of ``dynamics``' model (a FastDynamics): see the module docstring.

    A workspace of its own (one caller, one thread at a time) on the same model, robot and
    gravity.  Pass float64 arrays for the fastest call; anything else is checked and converted.
    """

    def __init__(self, dynamics):
        model = getattr(dynamics, 'model', None)
        if model is None or not hasattr(dynamics, 'new_workspace'):
            raise InputError(
                'dynamics: expected a FastDynamics (spart_ros.core.fast), got '
                f'{chk.given(dynamics)}'
            )
        self.dynamics = dynamics
        self.model, self.robot = model, dynamics.robot
        self.n, self.n_q = n, nq = model.n, model.n_q
        size = 6 + nq
        self._mi, self._mf, self._gravity = model.mi, model.mf, model.gravity
        z = np.zeros
        self._W, self._D = z((n + 2, L.WS_COLS)), z((n + 8, DL.D_COLS))
        self._tau, self._dq, self._du, self._H = (
            z(size),
            z((size, size)),
            z((size, size)),
            z((size, size)),
        )
        self._dh = z((6, size))
        self._udot, self._fdq, self._fdu, self._Minv = (
            z(size),
            z((size, size)),
            z((size, size)),
            z((size, size)),
        )
        self._L = z((2 * size + 7, size))
        self._zero6, self._zero_q = z(6), z(nq)
        self._id = InverseDynamicsDerivatives(self._tau, self._dq, self._du, self._H)
        self._fd = ForwardDynamicsDerivatives(self._udot, self._fdq, self._fdu, self._Minv)

    def _state(self, R0, r0, qm, u0, um, a0, am, names):
        """Return the arguments checked and converted (the slow path; InputError naming one)."""
        nq = self.n_q
        return (
            chk.rotation('R0', R0),
            chk.vector('r0', r0, 3),
            chk.vector('qm', qm, nq),
            chk.vector('u0', u0, 6),
            chk.vector('um', um, nq),
            chk.vector(names[0], a0, 6),
            chk.vector(names[1], am, nq),
        )

    def _raise(self, code, what):
        if code in (L.OVERFLOW, L.SINGULAR):
            raise InputError(
                f'{what}: the result is not finite or H is singular at this state (error code '
                f"{code}); the state is far beyond the robot's size or the model singular"
            )
        kind, k = divmod(code, 100)
        arg = L.ARGUMENT_NAMES[k] if 0 < k < len(L.ARGUMENT_NAMES) else 'an argument'
        raise InputError(f'{what}: {arg} rejected by the compiled checks (error code {code})')

    def inverse_dynamics(self, R0, r0, qm, u0, um, u0dot, umdot, floating=True):
        """
        Return :data:`InverseDynamicsDerivatives` (tau, dtau_dq, dtau_du, H) at the state.

        ``R0`` (3, 3), ``r0`` (3,), ``qm`` (n_q,), ``u0`` (6,), ``um`` (n_q,), ``u0dot`` (6,),
        ``umdot`` (n_q,): SPART's state and accelerations; ``floating`` False pins the base.
        """
        outs = (self._tau, self._dq, self._du, self._H, self._dh)
        state = (R0, r0, qm, u0, um, u0dot, umdot)
        self._call(N.rnea_derivatives, _K_ID, state, floating, outs, ('u0dot', 'umdot'), 'inverse')
        return self._id

    def forward_dynamics(self, R0, r0, qm, u0, um, tau0, taum, floating=True):
        """
        Return :data:`ForwardDynamicsDerivatives` (udot, dudot_dq, dudot_du, H^-1) at the state.

        ``R0`` (3, 3), ``r0`` (3,), ``qm`` (n_q,), ``u0`` (6,), ``um`` (n_q,): SPART's state;
        ``tau0`` (6,), ``taum`` (n_q,): the generalized forces; ``floating`` False pins the base
        (then only the joint block is filled).
        """
        if not self.dynamics._invertible[0 if floating else 1]:
            self.dynamics._check_invertible(floating)
        outs = (self._udot, self._fdq, self._fdu, self._Minv, self._L)
        state = (R0, r0, qm, u0, um, tau0, taum)
        self._call(N.aba_derivatives, _K_FD, state, floating, outs, ('tau0', 'taum'), 'forward')
        return self._fd

    def _call(self, kernel, kinds, state, floating, outs, names, what):
        """Run ``kernel``: the checked compiled call, else every argument converted; raise."""
        mi, mf, W, D, g = self._mi, self._mf, self._W, self._D, self._gravity
        code = N.call(kernel, kinds, mi, mf, W, D, *state, g, floating, *outs)
        if code is None:  # an argument of another type: checked and converted in Python
            args = self._state(*state, names)
            code = kernel(mi, mf, W, D, *args, g, chk.flag('floating', floating), *outs)
        if code:
            self._raise(code, f'{what} dynamics derivatives')

    def momentum(self, R0, r0, qm, u0, um):
        """
        Return :data:`MomentumDerivatives` (h0 (6,), dh0_dq, dh0_du (6, 6 + n_q)), new arrays.

        ``R0`` (3, 3), ``r0`` (3,), ``qm`` (n_q,), ``u0`` (6,), ``um`` (n_q,): a free-floating
        base's state (:mod:`spart_ros.core.momentum`: h0 = P0' [L_r0; p]).
        """
        z6, zq = self._zero6, self._zero_q
        _, _, _, H = self.inverse_dynamics(R0, r0, qm, u0, um, z6, zq, True)
        u = np.concatenate([np.asarray(u0, float), np.asarray(um, float)])
        return MomentumDerivatives(H[0:6] @ u, self._dh.copy(), H[0:6].copy())
