"""
The detumble law: after the grasp, the robot and its captured target brought to rest.

On the model that carries the target (:func:`~spart_ros.control.grasp.capture_model`), each tick:

- **the arm is compliant**: a joint impedance about the posture at the grasp, its gains scaled
  by the joints' inertia with the base free, H* = Hm - H0m' H0^-1 H0m (the target's in it),

      taum = H* (w^2 (q_g - q) - 2 z w qd)

  (``frequency`` w [rad/s], ``damping_ratio`` z), clamped to the effort limits: every mode of the
  arm relative to the base, the heavy target's and the light self-motion of a redundant arm alike,
  is a spring-damper of that frequency and damping ratio (plain diagonal gains would make the
  light self-motion stiff and its damping unstable at a control period that suits the target's);
  the arm damps the target's motion relative to the base and keeps the loads at the grasp low (no
  stiff position loop fights the target's momentum);
- **the base absorbs the momentum**: the system's angular momentum about its CoM, L (world), and
  its linear momentum P are what must go (internal forces cannot change them).  The base's torque
  (its reaction wheels: the torque they exert on the base is what leaves the system; they store
  it) is such that the external torque about the system CoM is ``-k_L L``, and its force (the
  thrusters, at the base CoM) ``-k_P P`` (``momentum_gains`` k_L, k_P
  [1/s]), each scaled down to its bound (``max_torque`` [N m], ``max_force`` [N]; 0: that
  actuator is not used).  Unsaturated, L and P decay as exp(-k t) whatever the arm does; the
  arm's damping removes the internal motion; the system comes to rest.

Rest (:meth:`Detumble.at_rest`): every rate below its tolerance (``rest_tolerances``: the base's
angular rate [rad/s], the base CoM's speed [m/s], the joints' rates [rad/s]).  The wrench is
returned at b's origin in b's axes, as the base actuators take it
(:class:`~spart_ros.control.base_actuation.BaseActuatorControl`); what the wheels' own spin adds
is theirs to add (:meth:`~spart_ros.control.base_actuation.BaseActuatorControl.required_wrench`).

Pure numpy on the compiled fast path; no ROS.
"""

from collections import namedtuple

import numpy as np

from .capture_motion import _per_joint
from .law import BaseFrames
from ..core import checks as chk
from ..core.attitude import _cross  # np.cross costs 8 times as much on 3-vectors
from ..core.errors import InputError
from ..core.fast import FastDynamics
from ..core.momentum import about_point, center_of_mass_from_H0

__all__ = ['Detumble', 'DetumbleCommand']

DetumbleCommand = namedtuple(
    'DetumbleCommand',
    'efforts base_torque base_force momentum rates saturated message',
)
DetumbleCommand.__doc__ = """One tick of :class:`Detumble`: ``efforts`` (n_q,) [N m or N];
``base_torque``, ``base_force`` (3,) at b's origin, in b; ``momentum`` (6,) [L about the
system CoM; P], world [N m s; N s]; ``rates`` (3,): the base's angular rate [rad/s], its CoM's
speed [m/s] and the largest joint rate [rad/s]; ``saturated``: the actuators at a bound
('efforts', 'torque', 'force'); ``message``: why the command is not what the law asked for
('' if it is)."""


def _scaled(x, bound):
    """``x`` scaled down to the norm ``bound`` (direction kept); 0 when bound is 0."""
    if bound <= 0:
        return np.zeros_like(x), bool(np.any(x))
    n = float(np.linalg.norm(x))
    return (x * (bound / n), True) if n > bound else (x, False)


class Detumble:
    """
    The detumble law on the model with the target (see the module docstring).

    ``robot``: the model with the target as a payload; ``posture`` (n_q,): the joint positions to
    hold (those at the grasp); ``frequency`` [rad/s], ``damping_ratio``; ``momentum_gains``
    (k_L, k_P) [1/s]; ``max_torque`` [N m], ``max_force`` [N]; ``max_efforts`` (default the URDF
    effort limits); ``rest_tolerances`` (angular rate, speed, joint rate); ``dynamics``: the
    model's FastDynamics to share.
    """

    def __init__(
        self,
        robot,
        posture,
        *,
        frequency=1.0,
        damping_ratio=1.0,
        momentum_gains=(0.5, 0.5),
        max_torque=1.0,
        max_force=10.0,
        max_efforts=None,
        rest_tolerances=(0.1 * np.pi / 180.0, 1e-3, 0.2 * np.pi / 180.0),
        dynamics=None,
    ):
        self.robot = robot
        fd = FastDynamics(robot) if dynamics is None else dynamics
        if fd.robot is not robot:
            raise InputError('dynamics: a FastDynamics of another robot model')
        self.dynamics = fd.new_workspace()
        n = self.n_q = robot.n_q
        self.posture = np.array(chk.vector('posture', posture, n), dtype=float)
        self.frequency = chk.nonnegative('frequency', frequency)
        self.damping_ratio = chk.nonnegative('damping_ratio', damping_ratio)
        kl, kp = momentum_gains
        self.momentum_gains = (chk.nonnegative('k_L', kl), chk.nonnegative('k_P', kp))
        self.max_torque = chk.nonnegative('max_torque', max_torque)
        self.max_force = chk.nonnegative('max_force', max_force)
        moving = sorted((j for j in robot.joints if j.q_id > 0), key=lambda j: j.q_id)
        efforts = (
            [j.limits.effort if j.limits.effort > 0 else np.inf for j in moving]
            if max_efforts is None
            else max_efforts
        )
        self.max_efforts = _per_joint('max_efforts', efforts, n)
        tol = np.asarray(rest_tolerances, dtype=float)
        if tol.shape != (3,) or not np.all(tol > 0):
            raise InputError(
                'rest_tolerances: expected 3 numbers > 0 (base rate rad/s, speed m/s, joint rate '
                f'rad/s), got {chk.given(rest_tolerances)}'
            )
        self.rest_tolerances = tol
        self.frames = BaseFrames(robot)

    def momentum(self, R0, r0, q, u0, qd):
        """
        Return ([L about the system CoM; P] (6,), world; the system CoM (3,)) at this state.

        ``R0``, ``r0``, ``q``, ``u0``, ``qd``: the state in SPART's conventions.
        """
        H = self.dynamics.mass_matrix(R0, r0, q)
        H0, H0m = H[0:6, 0:6], H[0:6, 6:]
        h0 = H0 @ u0 + H0m @ qd
        com = center_of_mass_from_H0(H0, R0, r0)
        self._reduced_inertia = H[6:, 6:] - H0m.T @ np.linalg.solve(H0, H0m)
        return about_point(h0, R0, r0, com, 'Detumble.momentum', [('h0', h0)]), com

    def command(self, state, t=None):
        """
        Return the :data:`DetumbleCommand` of one tick.

        ``state``: the measured state (``base`` with R_b, p_b, v_b, w_b; ``q``, ``qd``); ``t``:
        the control time [s] (not used: the law has no memory).
        """
        base = state.base
        q = np.asarray(state.q, dtype=float)
        qd = np.asarray(state.qd, dtype=float)
        R0, r0, u0 = (a.copy() for a in self.frames.floating(base))
        h, com = self.momentum(R0, r0, q, u0, qd)
        kl, kp = self.momentum_gains
        force_w, force_sat = _scaled(-kp * h[3:6], self.max_force)
        # the torque about the system CoM is -k_L L: the force (at the base CoM) has a moment too
        torque_w, torque_sat = _scaled(-kl * h[0:3] - _cross(r0 - com, force_w), self.max_torque)
        R_b = np.asarray(base.R_b, dtype=float)
        w, z = self.frequency, self.damping_ratio
        taum = self._reduced_inertia @ (w * w * (self.posture - q) - 2.0 * z * w * qd)
        efforts = np.clip(taum, -self.max_efforts, self.max_efforts)
        saturated = [
            name
            for name, s in (
                ('efforts', np.any(efforts != taum)),
                ('torque', torque_sat),
                ('force', force_sat),
            )
            if s
        ]
        v0 = u0[3:6]
        rates = np.array(
            [
                float(np.linalg.norm(base.w_b)),
                float(np.linalg.norm(v0)),
                float(np.abs(qd).max()) if qd.size else 0.0,
            ]
        )
        # the force acts at the base CoM: its moment about b's origin is p_bc x f_b
        force_b = R_b.T @ force_w
        torque_b = R_b.T @ torque_w + _cross(self.frames.p_bc, force_b)
        return DetumbleCommand(
            efforts,
            torque_b,
            force_b,
            h,
            rates,
            saturated,
            ('at its bounds: ' + ', '.join(saturated)) if saturated else '',
        )

    def at_rest(self, command):
        """Return True if the rates of ``command`` (a :data:`DetumbleCommand`) are at rest."""
        return bool(np.all(command.rates <= self.rest_tolerances))
