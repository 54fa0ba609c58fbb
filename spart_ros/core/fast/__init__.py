"""
Fast path: O(n) compiled dynamics for control loops, in SPART's conventions.

:class:`FastDynamics` is a workspace (Pinocchio's Data: scratch and result arrays)
on a constant compiled model of a :class:`~spart_ros.core.model.Robot`
(:class:`~spart_ros.core.compiled_model.CompiledModel`, Pinocchio's Model), and calls
the compiled kernels (:mod:`spart_ros.native.kernels`) once per algorithm:

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
link_pose                   a link's CoM frame pose from the last call       (RL, rL)
==========================  ==============================================  ===========

Gravity is a property of the model (``FastDynamics(robot, gravity=[0, 0, -9.81])`` or
``fd.gravity = ...``; zero by default, for space), used by every call that gives no
``gravity=`` of its own.  So are the joints' damping, Coulomb friction and rotor inertia:
``FastDynamics(robot, joint_dynamics=True)`` adds what the robot declares
(``joint.dynamics``: URDF ``<dynamics>``, armature) to inverse dynamics, bias forces,
floating-base inverse dynamics, forward dynamics and the mass matrix
(:mod:`spart_ros.core.joint_friction`); the default, False, is the rigid-body model: SPART's
results.  ``fd.new_workspace()`` gives a second caller its own workspace on
the same model (nothing copied but the scratch): a control law and the mode that runs it
each keep their results.  State arguments are SPART's: R0 (3, 3) base CoM frame -> inertial, r0
(3,)
base CoM, qm (n_q,), u0 (6,) = [base angular velocity in the base frame; base
CoM velocity, inertial], um (n_q,); wrenches [torque; force] at CoMs in the
inertial frame; gravity (3,) in the inertial frame.  ``floating=False`` pins
the base (u0, u0dot ignored; tau0 is then the wrench the base mount carries).

Results: each method has its own output arrays (like Pinocchio's Data has tau, ddq,
M, J), returned as they are and overwritten only by the next call of the SAME method:
``tau0, taum = fd.inverse_dynamics(...)`` keeps its values through any number of
forward_dynamics, mass_matrix... calls, until the next inverse_dynamics (a call that
raises may leave its method's outputs overwritten too).  Copy a result to keep it beyond
that.  Nothing is allocated on the hot path.

Inputs are checked once, at the entry (see :mod:`spart_ros.core.checks`), and a bad one
raises InputError naming the argument, what was expected and what was given: the
kernels check shapes, finite values and that R0 is a rotation (every entry of R'R - I
within 1e-3, det R > 0) where that is nearly free, and that their results are finite
(an overflow, e.g. from 1e200 velocities, is an InputError naming the largest inputs,
``gravity (FastDynamics.gravity)`` when the object's own gravity caused it, or a
ModelError naming the robot and the joint or link when only the model is that large;
never an inf/NaN result).  The constructor checks ``gravity`` (3 finite numbers) and the
model's packed values (finite) once.  The fast call: float64 arrays (any layout: a
transposed R0 or a sliced vector is read where it is, not copied), ``floating`` True or False,
``link`` a Python int, no loads: each argument's type is checked in C (a few ns each, see
``spart_ros/native/_call.c``) and the compiled kernel called, which checks the rest.  Arguments
of another type (lists, ints, a (k, 1) column, None, complex...) take a slower path
(~10 us) that checks and converts them in Python (to C-ordered float64 arrays) on each such
call.  ``link`` is an integer 0..n (Python or numpy) or a link name; ``floating`` a bool (a
number counts by its truth value).
"""

import numpy as np

from .. import checks as chk
from ..compiled_model import CompiledModel
from ..errors import InputError, SingularModelError, SpartError
from ..invertibility import check_invertible
from ..joint_friction import FRICTION_VELOCITY
from ...native import compiled as N
from ...native import layout as L
from ...native.exports import EXPORTS

__all__ = ['FastDynamics', 'CompiledModel']

_call = N.call
_rnea, _rnea_loads, _floating_rnea, _floating_rnea_loads = (
    N.rnea,
    N.rnea_loads,
    N.floating_rnea,
    N.floating_rnea_loads,
)
_aba, _aba_loads, _crba, _jacobian, _jacobian_and_bias, _twists_and_com = (
    N.aba,
    N.aba_loads,
    N.crba,
    N.jacobian,
    N.jacobian_and_bias,
    N.twists_and_com,
)
# each entry kernel by name, its argument names after (mi, mf, W), and what it computes (for
# messages)
_KERNELS = {
    'rnea': _rnea,
    'rnea_loads': _rnea_loads,
    'floating_rnea': _floating_rnea,
    'floating_rnea_loads': _floating_rnea_loads,
    'aba': _aba,
    'aba_loads': _aba_loads,
    'crba': _crba,
    'jacobian': _jacobian,
    'jacobian_and_bias': _jacobian_and_bias,
    'twists_and_com': _twists_and_com,
}
_ARGUMENTS = {name: EXPORTS[name][1][3:] for name in _KERNELS}
_COMPUTES = {
    'rnea': 'inverse dynamics (rnea)',
    'floating_rnea': 'floating-base inverse dynamics',
    'aba': 'forward dynamics (aba)',
    'crba': 'the mass matrix (crba)',
    'jacobian': 'the Jacobian',
    'jacobian_and_bias': 'the Jacobian and its bias',
    'twists_and_com': 'the twists',
}
_COMPUTES.update({f'{name}_loads': _COMPUTES[name] for name in ('rnea', 'floating_rnea', 'aba')})
_OUTPUTS = frozenset(('out', 'H', 'J', 'bias', 'rL', 'tL', 'com'))
# each kernel's argument kinds for the checked compiled call N.call (see native/_call.c)
_KINDS = {name: N.KINDS[name] for name in _KERNELS}
_K_RNEA, _K_FLOATING_RNEA, _K_ABA, _K_CRBA = (
    _KINDS['rnea'],
    _KINDS['floating_rnea'],
    _KINDS['aba'],
    _KINDS['crba'],
)
_K_JACOBIAN, _K_JACOBIAN_AND_BIAS, _K_TWISTS = (
    _KINDS['jacobian'],
    _KINDS['jacobian_and_bias'],
    _KINDS['twists_and_com'],
)
_LENGTHS = {
    'r0': 3,
    'gravity': 3,
    'offset': 3,
    'u0': 6,
    'u0dot': 6,
    'tau0': 6,
    'wF0': 6,
}  # others: n_q


class FastDynamics:
    """
    Compiled dynamics of one robot: a constant model and this object's workspace.

    ``FastDynamics(robot, gravity=None, joint_dynamics=False)`` packs ``robot`` into a new
    :class:`CompiledModel` (``gravity`` (3,), inertial frame, and ``joint_dynamics``, whether the
    joints' declared damping, friction and armature enter the dynamics, are the model's);
    ``friction_velocity`` [rad/s or m/s]: the velocity scale of the smoothed Coulomb friction
    (``tanh(qd / friction_velocity)``);
    ``FastDynamics(model=model)`` makes another workspace on an existing model, as
    :meth:`new_workspace` does.  Each workspace has
    its own scratch and result arrays (Pinocchio's Data): two callers with two workspaces
    never overwrite each other's results, and the model is shared, never copied.  One
    workspace is for one thread at a time.

    Pass float64 arrays for the fastest call: anything else (lists, ints, ...) is checked and
    converted on every call.
    """

    # slots: 30+ attributes would leave CPython's fast attribute access (~35 ns per call)
    __slots__ = (
        'model',
        'robot',
        'n',
        'n_q',
        '_mi',
        '_mf',
        '_W',
        '_zero6',
        '_zero3',
        '_zero_wFm',
        '_zero_q',
        '_id_out',
        '_bias_out',
        '_gravity_out',
        '_fid_out',
        '_fd_out',
        '_id',
        '_bias',
        '_gravity_result',
        '_fid',
        '_fd',
        '_H',
        '_J',
        '_Jbias',
        '_jacobian_result',
        '_rL',
        '_tL',
        '_com',
        '_twists_result',
        '_gravity',
        '_invertible',
        '__dict__',
    )

    def __init__(
        self,
        robot=None,
        gravity=None,
        *,
        model=None,
        joint_dynamics=False,
        friction_velocity=FRICTION_VELOCITY,
    ):
        if model is None:
            model = CompiledModel(robot, gravity, joint_dynamics, friction_velocity)
        elif not isinstance(model, CompiledModel):
            raise InputError(
                f'model: expected a CompiledModel (FastDynamics.model), got {chk.given(model)}'
            )
        elif robot is not None and robot is not model.robot:
            raise InputError(f'robot: {chk.given(robot)} is not the robot of model {model!r}')
        elif gravity is not None:
            raise InputError(
                'gravity: belongs to the model: set it on the FastDynamics that made the model '
                '(fd.gravity = g), not per workspace'
            )
        elif joint_dynamics:
            raise InputError(
                'joint_dynamics: belongs to the model (FastDynamics(robot, joint_dynamics=True)), '
                'not to a workspace'
            )
        self.model = model
        self.robot = model.robot
        self.n, self.n_q = n, nq = model.n, model.n_q
        self._mi, self._mf = model.mi, model.mf
        z = np.zeros
        self._W = z((n + 2, L.WS_COLS))
        self._zero6, self._zero3, self._zero_wFm, self._zero_q = z(6), z(3), z((6, n)), z(nq)
        # each algorithm's own outputs ([6 base values, n_q joint values]) and the views returned
        self._id_out, self._bias_out, self._gravity_out, self._fid_out, self._fd_out = (
            z(6 + nq) for _ in range(5)
        )
        self._id = (self._id_out[0:6], self._id_out[6:])
        self._bias = (self._bias_out[0:6], self._bias_out[6:])
        self._gravity_result = (self._gravity_out[0:6], self._gravity_out[6:])
        self._fid = (self._fid_out[6:], self._fid_out[0:6])  # (taum, u0dot)
        self._fd = (self._fd_out[0:6], self._fd_out[6:])
        self._H = z((6 + nq, 6 + nq))
        self._J, self._Jbias = z((6, 6 + nq)), z(6)
        self._jacobian_result = (self._J, self._Jbias)
        self._rL, self._tL, self._com = z((3, n + 1)), z((6, n + 1)), z(6)
        self._twists_result = (self._rL, self._tL, self._com)
        self._gravity = (
            model.gravity
        )  # the model's array (set in place): a call without gravity= uses it
        self._invertible = (
            model.invertible
        )  # the model's answers: H checked invertible (floating, fixed, H0)

    def new_workspace(self):
        """
        Return another FastDynamics on this object's model, with its own workspace and results.

        Same robot and gravity, nothing copied: for a second caller, e.g. a control law beside the
        mode that runs it, so that neither overwrites the other's results.
        """
        return FastDynamics(model=self.model)

    @property
    def joint_dynamics(self):
        """Return True if the model adds the joints' damping, friction and armature (read only)."""
        return self.model.joint_dynamics

    def joint_friction(self, um):
        """
        Return d um + F sgn_v(um) (n_q,), a new array.

        The efforts the joints' damping and smoothed Coulomb friction take at joint velocities
        ``um`` (zero without joint_dynamics), as the kernels add them to inverse dynamics.
        """
        um = self._numeric('um', chk.vector('um', um, self.n_q))
        m = self.model
        return m.damping * um + m.friction * np.tanh(um / m.friction_velocity)

    @property
    def gravity(self):
        """
        Return the model's gravity vector, (3,) in the inertial frame [m/s^2].

        The model's gravity is used when a call gives none (default zero: space). Set it once, like
        Pinocchio's ``model.gravity``: every workspace of the model (:meth:`new_workspace`) uses
        the new value.
        """
        return self._gravity.copy()

    @gravity.setter
    def gravity(self, g):
        self.model.set_gravity(g)

    # -- plumbing -------------------------------------------------------------------------
    # The compiled functions trust their argument types (numba's unboxing does not check them):
    # every call goes through _call, which checks each argument's type in C (float64 arrays of
    # the kernel's number of dimensions, exact bools) and returns None on another type; the
    # kernel checks shapes, values and results.  Anything else goes through _checked, which
    # checks and converts every argument in Python.

    def _run(self, name, *args):
        """
        Call kernel ``name`` the general way and raise on its error code.

        The arguments as they are if each already has the compiled call's type (loads or a gravity
        given); else every argument checked and converted (InputError naming the first bad one);
        then the kernel; raise on its error code.
        """
        kernel = _KERNELS[name]
        code = _call(kernel, _KINDS[name], self._mi, self._mf, self._W, *args)
        if code is None:
            args = self._checked(name, args)
            code = kernel(self._mi, self._mf, self._W, *args)
        if code:
            self._raise(code, name, args)

    @staticmethod
    def _numeric(name, a):
        if a.dtype == object:  # sympy numbers or expressions: numbers only here
            try:
                return np.ascontiguousarray(a, dtype=float)
            except (TypeError, ValueError):
                raise InputError(
                    f'{name}: the fast path needs numbers, got symbolic values'
                ) from None
        return a

    def _checked(self, name, args):
        """
        Return the arguments of entry kernel ``name`` checked and converted in Python.

        Converted to C-ordered float64 arrays, bools, ints; InputError naming the first bad one.
        """
        n, nq = self.n, self.n_q
        out = []
        for arg, a in zip(_ARGUMENTS[name], args):
            if arg in _OUTPUTS or a is self._gravity:
                pass
            elif arg == 'floating':
                a = chk.flag(arg, a)
            elif arg == 'link':
                a = chk.link_id(arg, a, self.robot)
            elif arg == 'R0':
                a = self._numeric(arg, chk.rotation(arg, a))
            elif arg == 'wFm':
                a = self._numeric(arg, chk.array(arg, a, (6, n)))
            else:
                a = self._numeric(arg, chk.vector(arg, a, _LENGTHS.get(arg, nq)))
            out.append(a)
        return out

    def _raise(self, code, name, args):
        inputs = [
            ('gravity (FastDynamics.gravity)' if a is self._gravity else arg, a)
            for arg, a in zip(_ARGUMENTS[name], args)
            if arg not in _OUTPUTS and isinstance(a, np.ndarray)
        ]
        if code == L.SINGULAR and not chk.huge(inputs):
            # the model is invertible in general (checked before): this state is singular, or
            # so far out (e.g. prismatic joints 1e6 m out) that H is numerically singular
            far = [
                f'{arg} (up to {np.abs(a).max():.3g})'
                for arg, a in inputs
                if a.dtype == np.float64 and a.size and np.abs(a).max() > 1e4
            ]
            raise SingularModelError(
                f'robot {self.robot.name!r}: singular inertia in this state (a point mass on a '
                'joint axis, or a joint that moves no mass'
                + (
                    f"; or the state is far beyond the robot's size: {', '.join(far)}"
                    if far
                    else ''
                )
                + ')'
            )
        if code in (L.OVERFLOW, L.SINGULAR):  # singular with inputs above 1e150: lost to overflow
            raise chk.overflow_error(f'FastDynamics: {_COMPUTES[name]}', inputs, self.robot)
        self._checked(name, args)  # says which argument is bad, and why
        kind, k = divmod(code, 100)  # (only if the two checks disagree)
        arg = L.ARGUMENT_NAMES[k] if 0 < k < len(L.ARGUMENT_NAMES) else 'an argument'
        raise InputError(f'{arg}: rejected by the compiled checks (error code {code})')

    def _check_invertible(self, floating, base_only=False):
        """
        check_invertible (names what has no mass), remembered in the model once passed.

        The check's own cache costs ~0.3 us per call, a fifth of a small robot's forward dynamics.
        """
        floating = chk.flag('floating', floating)
        check_invertible(self.robot, floating, base_only=base_only)
        self._invertible[2 if base_only else 0 if floating else 1] = True

    def _wrenches(self, wF0, wFm):
        """Both wrench arrays (zeros for the missing one) once either is given."""
        return self._zero6 if wF0 is None else wF0, self._zero_wFm if wFm is None else wFm

    # -- algorithms -----------------------------------------------------------------------
    # Each method first tries the checked compiled call (_call: every argument's type checked in
    # C, then the kernel; None when one is of another type, e.g. a list), then the general path.

    def inverse_dynamics(
        self, R0, r0, qm, u0, um, u0dot, umdot, wF0=None, wFm=None, gravity=None, floating=True
    ):
        """
        Return (tau0 (6,), taum (n_q,)) realizing u0dot, umdot under the loads (SPART ID).

        ``floating`` False pins the base (module docstring).
        """
        if wF0 is None and wFm is None and gravity is None:
            code = _call(
                _rnea,
                _K_RNEA,
                self._mi,
                self._mf,
                self._W,
                R0,
                r0,
                qm,
                u0,
                um,
                u0dot,
                umdot,
                self._gravity,
                floating,
                self._id_out,
            )
            if code == 0:
                return self._id
            if code is not None:
                self._raise(
                    code,
                    'rnea',
                    (R0, r0, qm, u0, um, u0dot, umdot, self._gravity, floating, self._id_out),
                )
            self._run(
                'rnea', R0, r0, qm, u0, um, u0dot, umdot, self._gravity, floating, self._id_out
            )
            return self._id
        g = self._gravity if gravity is None else gravity
        if wF0 is None and wFm is None:
            self._run('rnea', R0, r0, qm, u0, um, u0dot, umdot, g, floating, self._id_out)
        else:
            wF0, wFm = self._wrenches(wF0, wFm)
            self._run(
                'rnea_loads', R0, r0, qm, u0, um, u0dot, umdot, wF0, wFm, g, floating, self._id_out
            )
        return self._id

    def bias_forces(self, R0, r0, qm, u0, um, wF0=None, wFm=None, gravity=None, floating=True):
        """
        Return the generalized forces at zero acceleration.

        C(q, u) u (minus N'w and gravity when given); ``floating`` False pins the base.
        """
        z6, zq = self._zero6, self._zero_q
        if wF0 is None and wFm is None and gravity is None:
            code = _call(
                _rnea,
                _K_RNEA,
                self._mi,
                self._mf,
                self._W,
                R0,
                r0,
                qm,
                u0,
                um,
                z6,
                zq,
                self._gravity,
                floating,
                self._bias_out,
            )
            if code == 0:
                return self._bias
            if code is not None:
                self._raise(
                    code,
                    'rnea',
                    (R0, r0, qm, u0, um, z6, zq, self._gravity, floating, self._bias_out),
                )
        g = self._gravity if gravity is None else gravity
        if wF0 is None and wFm is None:
            self._run('rnea', R0, r0, qm, u0, um, z6, zq, g, floating, self._bias_out)
        else:
            wF0, wFm = self._wrenches(wF0, wFm)
            self._run(
                'rnea_loads', R0, r0, qm, u0, um, z6, zq, wF0, wFm, g, floating, self._bias_out
            )
        return self._bias

    def gravity_forces(self, R0, r0, qm, gravity=None):
        """
        Return (g0 (6,), gm (n_q,)).

        The generalized forces that hold the robot still against gravity (``gravity`` (3,), or the
        model's).
        """
        z6, zq = self._zero6, self._zero_q
        g = self._gravity if gravity is None else gravity
        code = _call(
            _rnea,
            _K_RNEA,
            self._mi,
            self._mf,
            self._W,
            R0,
            r0,
            qm,
            z6,
            zq,
            z6,
            zq,
            g,
            False,
            self._gravity_out,
        )
        if code == 0:
            return self._gravity_result
        if code is not None:
            self._raise(code, 'rnea', (R0, r0, qm, z6, zq, z6, zq, g, False, self._gravity_out))
        self._run('rnea', R0, r0, qm, z6, zq, z6, zq, g, False, self._gravity_out)
        return self._gravity_result

    def floating_inverse_dynamics(
        self, R0, r0, qm, u0, um, umdot, wF0=None, wFm=None, gravity=None
    ):
        """
        Return (taum (n_q,), u0dot (6,)) for joint accelerations umdot with the base free.

        The base is unactuated (tau0 = 0); O(n) (SPART Floating_ID).
        """
        if not self._invertible[2]:
            self._check_invertible(True, base_only=True)
        if wF0 is None and wFm is None and gravity is None:
            code = _call(
                _floating_rnea,
                _K_FLOATING_RNEA,
                self._mi,
                self._mf,
                self._W,
                R0,
                r0,
                qm,
                u0,
                um,
                umdot,
                self._gravity,
                self._fid_out,
            )
            if code == 0:
                return self._fid
            if code is not None:
                self._raise(
                    code,
                    'floating_rnea',
                    (R0, r0, qm, u0, um, umdot, self._gravity, self._fid_out),
                )
        g = self._gravity if gravity is None else gravity
        if wF0 is None and wFm is None:
            self._run('floating_rnea', R0, r0, qm, u0, um, umdot, g, self._fid_out)
        else:
            wF0, wFm = self._wrenches(wF0, wFm)
            self._run('floating_rnea_loads', R0, r0, qm, u0, um, umdot, wF0, wFm, g, self._fid_out)
        return self._fid

    def forward_dynamics(
        self, R0, r0, qm, u0, um, tau0, taum, wF0=None, wFm=None, gravity=None, floating=True
    ):
        """
        Return (u0dot (6,), umdot (n_q,)) under generalized forces tau0, taum and the loads, O(n).

        SPART FD. With floating=False the base stays still and u0dot = 0.
        """
        if floating is True:
            if not self._invertible[0]:
                self._check_invertible(True)
        elif floating is not False or not self._invertible[1]:
            self._check_invertible(floating)
        if wF0 is None and wFm is None and gravity is None:
            code = _call(
                _aba,
                _K_ABA,
                self._mi,
                self._mf,
                self._W,
                R0,
                r0,
                qm,
                u0,
                um,
                tau0,
                taum,
                self._gravity,
                floating,
                self._fd_out,
            )
            if code == 0:
                return self._fd
            if code is not None:
                self._raise(
                    code,
                    'aba',
                    (R0, r0, qm, u0, um, tau0, taum, self._gravity, floating, self._fd_out),
                )
        g = self._gravity if gravity is None else gravity
        if wF0 is None and wFm is None:
            self._run('aba', R0, r0, qm, u0, um, tau0, taum, g, floating, self._fd_out)
        else:
            wF0, wFm = self._wrenches(wF0, wFm)
            self._run(
                'aba_loads', R0, r0, qm, u0, um, tau0, taum, wF0, wFm, g, floating, self._fd_out
            )
        return self._fd

    def mass_matrix(self, R0, r0, qm):
        """
        Return H (6 + n_q, 6 + n_q) for u = [u0; um] (SPART GIM).

        A fixed base uses H[6:, 6:].
        """
        code = _call(_crba, _K_CRBA, self._mi, self._mf, self._W, R0, r0, qm, self._H)
        if code == 0:
            return self._H
        if code is not None:
            self._raise(code, 'crba', (R0, r0, qm, self._H))
        self._run('crba', R0, r0, qm, self._H)
        return self._H

    def jacobian(self, link, R0, r0, qm, u0=None, um=None, offset=None, floating=True, bias=True):
        """
        (J (6, 6 + n_q), Jdot u (6,)) of a point on ``link`` (SPART id, 0 = base, or a name).

        ``offset`` (3,): the point from the link CoM, in the link CoM frame.  Rows are
        [angular velocity of the link; velocity of the point], inertial frame, so that
        t_p = J [u0; um] and d/dt t_p = J [u0dot; umdot] + Jdot u.  With floating=False
        the bias ignores u0 (the base columns stay in J).  bias=False skips the bias pass
        (the returned bias is then stale) for a cheaper call; u0 and um may then be None.
        """
        if type(link) is not int or not 0 <= link <= self.n:
            link = chk.link_id('link', link, self.robot)
        if offset is None:
            offset = self._zero3
        if not bias:
            code = _call(
                _jacobian,
                _K_JACOBIAN,
                self._mi,
                self._mf,
                self._W,
                R0,
                r0,
                qm,
                link,
                offset,
                self._J,
            )
            if code == 0:
                return self._jacobian_result
            if code is not None:
                self._raise(code, 'jacobian', (R0, r0, qm, link, offset, self._J))
            self._run('jacobian', R0, r0, qm, link, offset, self._J)
            return self._jacobian_result
        if u0 is None:
            u0 = self._zero6
        if um is None:
            um = self._zero_q
        code = _call(
            _jacobian_and_bias,
            _K_JACOBIAN_AND_BIAS,
            self._mi,
            self._mf,
            self._W,
            R0,
            r0,
            qm,
            u0,
            um,
            link,
            offset,
            floating,
            self._J,
            self._Jbias,
        )
        if code == 0:
            return self._jacobian_result
        if code is not None:
            self._raise(
                code,
                'jacobian_and_bias',
                (R0, r0, qm, u0, um, link, offset, floating, self._J, self._Jbias),
            )
        self._run(
            'jacobian_and_bias', R0, r0, qm, u0, um, link, offset, floating, self._J, self._Jbias
        )
        return self._jacobian_result

    def twists(self, R0, r0, qm, u0, um, floating=True):
        """
        Return (rL (3, n + 1), tL (6, n + 1), com (6,)).

        CoM positions and twists [omega; CoM velocity] of the base (column 0) and links, and
        [system CoM; its velocity]; ``floating`` False pins the base.
        """
        code = _call(
            _twists_and_com,
            _K_TWISTS,
            self._mi,
            self._mf,
            self._W,
            R0,
            r0,
            qm,
            u0,
            um,
            floating,
            self._rL,
            self._tL,
            self._com,
        )
        if code == 0:
            return self._twists_result
        if code is not None:
            self._raise(
                code,
                'twists_and_com',
                (R0, r0, qm, u0, um, floating, self._rL, self._tL, self._com),
            )
        self._run('twists_and_com', R0, r0, qm, u0, um, floating, self._rL, self._tL, self._com)
        return self._twists_result

    def link_pose(self, link):
        """
        (R (3, 3), d (3,)).

        Pose of ``link``'s CoM frame (SPART id, 0 = base, or a name) at the state (R0, r0, qm) of
        the LAST call of any method above, read from the forward kinematics that call ran (nothing
        is recomputed: ~0.5 us).

        R: the link CoM frame -> inertial (SPART RL[:, :, i], R0 for the base); d: the link CoM
        minus that call's r0, inertial axes (rL[:, i] = r0 + d; d = 0 for the base).  Valid after
        a call that returned; undefined after one that raised.  Both are views of the workspace,
        overwritten by the next call of any method: copy to keep.  SpartError before any call.
        """
        if type(link) is not int or not 0 <= link <= self.n:
            link = chk.link_id('link', link, self.robot)
        W = self._W
        if (
            W[0, L.R] == 0.0 and W[0, L.R + 1] == 0.0 and W[0, L.R + 2] == 0.0
        ):  # R0's first row: never 0
            raise SpartError('link_pose: no state yet: call a method with (R0, r0, qm) first')
        return W[link, L.R : L.R + 9].reshape(3, 3), W[link, L.X : L.X + 3]
