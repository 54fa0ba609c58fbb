"""
The end effector's reference while it approaches a moving fixture and synchronises with it.

The end-effector frame E must reach the **grasp frame** G(t) = T_f(t) G (the fixture frame f at
its predicted pose, :class:`~spart_ros.core.free_body.FixturePrediction`, moved by the grasp offset
G: E in f at the grasp) with zero relative pose and twist at the planned grasp time t_g, then
move with it.  The reference is written relative to G(t):

    T_ref(t) = G(t) D(t)

with D(t) the relative pose, from D(t0) = G(t0)^-1 T_E(t0) (where E is at the start) to D = I at
t_g, at rest relative to G at both ends:

- without a stand-off: D(t) = exp(sigma(t) xi0), xi0 = log(D(t0)), sigma = 1 - s(t) with the
  quintic time scaling s from t0 to t_g (:func:`~.time_scaling.quintic_time_scaling`);
- with a stand-off distance d along the approach axis a (in G): first to S = Trans(-d a)
  (the end effector d behind the grasp, on the axis), D(t) = S exp(sigma1 xi1), xi1 =
  log(S^-1 D(t0)), over [t0, t1], then straight in along the axis, D(t) = exp(sigma2 log S),
  over [t1, t_g], t1 = t0 + ``standoff_fraction`` (t_g - t0).

D is a screw motion in G's frame, so the reference follows the fixture's motion (its rotation
included) all along, and only the relative part shrinks: the approach is made in the fixture's
frame.  At t0 the reference therefore has the velocity the fixture's motion gives the end
effector's start pose (the law's velocity loop takes it up within 1 / ``velocity_gain``; the
planner checks the joint rates it needs).  After t_g, D = I: synchronised.

Twists and accelerations (body twist of a product: V_ref = Ad(D^-1) V_G + V_D, V_D = sigma' xi):

    V_ref^b = Ad(D^-1) V_G^b + sigma' xi
    A_ref^b = Ad(D^-1) A_G^b - ad(sigma' xi) Ad(D^-1) V_G^b + sigma'' xi

returned in the world frame as [angular velocity; velocity of E's origin] and their time
derivatives (:data:`ReferenceSample`).  A new estimate of the target
(:meth:`ApproachPath.set_prediction`) moves G(t) and leaves D(t) as it was: the reference moves
with the estimate, smoothly when the estimate does.

Pure numpy, no ROS.
"""

from collections import namedtuple

import numpy as np

from .time_scaling import quintic_time_scaling
from ..core import checks as chk
from ..core.attitude import _cross  # np.cross costs 8 times as much on 3-vectors
from ..core.errors import InputError
from ..core.rigid_motion import _adjoint, _transform_exp, _transform_log

__all__ = ['ApproachPath', 'ReferenceSample', 'APPROACH', 'SYNCHRONISE']

APPROACH, SYNCHRONISE = 'approach', 'synchronise'

ReferenceSample = namedtuple('ReferenceSample', 'R p twist acceleration sigma stage fixture')
ReferenceSample.__doc__ = """The end effector's reference at one time, world frame: ``R`` (3, 3),
``p`` (3,); ``twist`` (6,) [angular velocity; velocity of the origin], ``acceleration`` (6,) their
time derivatives; ``sigma``: how much of the relative pose is left (1 at the start, 0 at the
grasp); ``stage``: :data:`APPROACH` before t_g, :data:`SYNCHRONISE` from t_g on; ``fixture``: the
fixture's :data:`~spart_ros.core.target.FixtureMotion` it was made of."""


def _ad(V):
    """Return ad_V (6, 6) of a twist V = [w; v]: ad_V X = [w x x_w; w x x_v + v x x_w]."""
    w, v = V[0:3], V[3:6]
    W = np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])
    A = np.zeros((6, 6))
    A[0:3, 0:3] = W
    A[3:6, 3:6] = W
    A[3:6, 0:3] = np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])
    return A


def _inverse(T):
    R, p = T[:3, :3], T[:3, 3]
    out = np.eye(4)
    out[:3, :3] = R.T
    out[:3, 3] = -(R.T @ p)
    return out


class ApproachPath:
    """
    The reference of the approach and the synchronisation (see the module docstring).

    ``prediction``: the fixture's :class:`~spart_ros.core.free_body.FixturePrediction` (in the
    controller's world frame); ``start`` (4, 4): the end-effector frame's pose at ``t0`` [s];
    ``t_grasp`` [s] > t0: when the relative pose must be zero; ``grasp_offset`` (4, 4): E in f at
    the grasp (None: identity); ``standoff`` [m] >= 0 along ``approach_axis`` (3,), G's axes
    (default z), reached at ``standoff_fraction`` (0..1) of the time.
    """

    def __init__(
        self,
        prediction,
        start,
        t0,
        t_grasp,
        grasp_offset=None,
        standoff=0.0,
        approach_axis=(0.0, 0.0, 1.0),
        standoff_fraction=0.7,
    ):
        self.t0, self.t_grasp = chk.scalar('t0', t0), chk.scalar('t_grasp', t_grasp)
        if not self.t_grasp > self.t0:
            raise InputError(
                f't_grasp: expected a time after t0 = {self.t0} s, got {self.t_grasp} s'
            )
        self.G = (
            np.eye(4)
            if grasp_offset is None
            else np.array(chk.array('grasp_offset', grasp_offset, (4, 4)), dtype=float)
        )
        self.standoff = chk.nonnegative('standoff', standoff)
        axis = chk.vector('approach_axis', approach_axis, 3)
        if not np.linalg.norm(axis) > 0:
            raise InputError('approach_axis: a zero vector gives no direction')
        self.axis = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
        self.fraction = chk.scalar('standoff_fraction', standoff_fraction)
        if self.standoff > 0 and not 0.0 < self.fraction < 1.0:
            raise InputError(
                f'standoff_fraction: expected a number in (0, 1), got {self.fraction}'
            )
        self.prediction = prediction
        T0 = np.array(chk.array('start', start, (4, 4)), dtype=float)
        D0 = _inverse(self._grasp_frame(self.t0)[0]) @ T0
        if self.standoff > 0:
            S = np.eye(4)
            S[:3, 3] = -self.standoff * self.axis
            self._S = S
            self._xi_s = _transform_log(S[:3, :3], S[:3, 3])
            self._xi1 = _transform_log(*_split(_inverse(S) @ D0))
            self.t1 = self.t0 + self.fraction * (self.t_grasp - self.t0)
        else:
            self._S = None
            self._xi1 = _transform_log(*_split(D0))
            self.t1 = self.t_grasp

    def set_prediction(self, prediction):
        """Follow ``prediction`` (a newer estimate of the fixture's motion) from now on."""
        self.prediction = prediction

    def _grasp_frame(self, t):
        """(T_G (4, 4), V_G^b (6,), A_G^b (6,), fixture motion) at ``t``: G's body twist."""
        m = self.prediction.motion(t)
        T_f = np.eye(4)
        T_f[:3, :3], T_f[:3, 3] = m.R, m.p
        T_g = T_f @ self.G
        R_g, p_g = T_g[:3, :3], T_g[:3, 3]
        w, v_f = m.twist[0:3], m.twist[3:6]
        alpha, a_f = m.acceleration[0:3], m.acceleration[3:6]
        rho = p_g - m.p
        v = v_f + _cross(w, rho)
        a = a_f + _cross(alpha, rho) + _cross(w, _cross(w, rho))
        # body twist of G and its derivative: w_b = R' w, v_b = R' v; d/dt (R' x) = R' x' - w_b x
        # (R' x)
        w_b, v_b = R_g.T @ w, R_g.T @ v
        V = np.concatenate([w_b, v_b])
        A = np.concatenate([R_g.T @ alpha, R_g.T @ a - _cross(w_b, v_b)])
        return T_g, V, A, m

    def _relative(self, t):
        """(D (4, 4), V_D (6,), A_D (6,), sigma, stage) at ``t``."""
        if t >= self.t_grasp:
            return np.eye(4), np.zeros(6), np.zeros(6), 0.0, SYNCHRONISE
        if t < self.t1 or self._S is None:
            s = quintic_time_scaling(self.t1 - self.t0, max(t - self.t0, 0.0))
            sigma, xi = 1.0 - s.s, self._xi1
            D = _transform_exp(sigma * xi)
            if self._S is not None:
                D = self._S @ D
            left = sigma if self._S is None else 1.0 + sigma
        else:
            s = quintic_time_scaling(self.t_grasp - self.t1, t - self.t1)
            sigma, xi = 1.0 - s.s, self._xi_s
            D = _transform_exp(sigma * xi)
            left = sigma
        total = 1.0 if self._S is None else 2.0
        return D, -s.s_dot * xi, -s.s_ddot * xi, left / total, APPROACH

    def sample(self, t):
        """Return the :data:`ReferenceSample` at time ``t`` [s] (>= the prediction's estimate)."""
        t = float(t)
        T_g, V_g, A_g, fixture = self._grasp_frame(t)
        D, V_d, A_d, sigma, stage = self._relative(t)
        T = T_g @ D
        D_inv = _inverse(D)
        Ad = _adjoint(D_inv[:3, :3], D_inv[:3, 3])
        Vg_in = Ad @ V_g
        V = Vg_in + V_d
        A = Ad @ A_g - _ad(V_d) @ Vg_in + A_d
        R, p = T[:3, :3], T[:3, 3]
        w_b, v_b = V[0:3], V[3:6]
        twist = np.concatenate([R @ w_b, R @ v_b])
        # d/dt (R x_b) = R (x_b' + w_b x x_b): the angular part's cross term is zero
        acc = np.concatenate([R @ A[0:3], R @ (A[3:6] + _cross(w_b, v_b))])
        return ReferenceSample(R.copy(), p.copy(), twist, acc, sigma, stage, fixture)


def _split(T):
    return T[:3, :3], T[:3, 3]
