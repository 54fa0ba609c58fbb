"""
A target's motion as a free rigid body, and its fixture's motion predicted from an estimate.

**Dynamics** (:class:`FreeBody`) of a :class:`~spart_ros.core.target.Target` (its frames and
state, :data:`~spart_ros.core.target.TargetState`: R l's axes -> world, r the CoM, v its velocity
in the world, w the angular velocity in body axes): a torque-free rigid body, with in orbit the
tidal force and the gravity-gradient torque of :class:`~spart_ros.core.orbit.CircularOrbit` (the
same loads the plants apply to every body, :meth:`~spart_ros.core.orbit.CircularOrbit.loads`),
and an optional uniform gravity ``g`` (no orbit)::

    m r'' = m g + f_tidal(t, r)
    I w' + w x (I w) = tau_gg(t, R)            (body axes)
    R' = R [w]x                                  (integrated as a unit quaternion)

Linear orbit model: f_tidal = m n^2 (3 e (e . r) - r), tau_gg = 3 n^2 e_b x (I e_b), e the radial
unit vector (e_b = R' e); nonlinear: the exact point-mass difference (:mod:`.orbit`).

**Prediction** (:class:`FixturePrediction`): from an estimate of the state at a time (a pose and
twist: :meth:`~spart_ros.core.target.Target.state_from_odometry`), the fixture's pose, twist and
acceleration at any later time, by RK4 with steps of at most ``max_step`` s and ``max_angle`` rad
of rotation (error below 1e-10 of the motion over tens of seconds at the tumble rates of a
capture), in the world frame or, with an orbit, in LVLH.  The integration is scalar Python (no
numpy call per stage): a step costs a few tens of microseconds; the prediction keeps the states
it reached, so that a control loop asking for the next tick's time costs one step.

Twists and accelerations of a frame are [angular; linear of the frame's origin], world axes.
Arguments are checked at the entry (InputError naming the argument and the fix).
"""

import math

import numpy as np

from . import checks as chk
from .attitude import _cross  # np.cross costs 8 times as much on 3-vectors
from .attitude import _unit_quaternion_rotation as _rotation
from .errors import InputError
from .orbit import CircularOrbit
from .target import _quaternion, FixtureMotion, Target, TargetState

__all__ = ['FreeBody', 'FixturePrediction']


class FreeBody:
    """
    The target's dynamics (see the module docstring).

    ``target`` (a :class:`Target`), ``orbit`` (a
    :class:`~spart_ros.core.orbit.CircularOrbit`, or None: empty space), ``gravity`` (3,) a uniform
    field [m/s^2] (default zero; not with an orbit, whose tidal field is the gravity there).

    ``max_step`` [s] and ``max_angle`` [rad]: the RK4 step of :meth:`propagate` is at most
    ``max_step`` and turns the body by at most ``max_angle`` (``max_angle / |w|``); the defaults
    keep the error below 1e-10 (relative) over 20 s at tumble rates up to 30 deg/s.
    """

    def __init__(self, target, orbit=None, gravity=None, max_step=0.05, max_angle=0.005):
        if not isinstance(target, Target):
            raise InputError(f'target: expected a Target (load_target), got {chk.given(target)}')
        if orbit is not None and not isinstance(orbit, CircularOrbit):
            raise InputError(f'orbit: expected a CircularOrbit or None, got {chk.given(orbit)}')
        g = np.zeros(3) if gravity is None else chk.vector('gravity', gravity, 3)
        if orbit is not None and np.any(g != 0):
            raise InputError(
                'gravity: must be zero with an orbit (its tidal field is the gravity near the '
                f'reference point), got {g.tolist()}'
            )
        self.target, self.orbit, self.gravity = target, orbit, np.array(g, dtype=float)
        self.max_step = chk.scalar('max_step', max_step)
        self.max_angle = chk.scalar('max_angle', max_angle)
        if not (self.max_step > 0 and self.max_angle > 0):
            raise InputError(
                f'max_step and max_angle must be > 0, got {self.max_step}, {self.max_angle}'
            )
        inertia = np.asarray(target.inertia, dtype=float)
        self._I = tuple(inertia.ravel().tolist())
        self._Iinv = tuple(np.linalg.inv(inertia).ravel().tolist())
        self._g = tuple(self.gravity.tolist())
        if orbit is None:
            self._loads = None
        else:
            self._n2 = orbit.mean_motion**2
            self._a = orbit.radius
            self._mu = orbit.mu
            self._loads = self._linear_loads if orbit.model == 'linear' else self._nonlinear_loads

    # -- the loads (scalar: one stage costs microseconds) --------------------------------------
    def _radial(self, t):
        a = self.orbit.mean_motion * t
        return math.cos(a), math.sin(a)

    def _linear_loads(self, t, rx, ry, rz):
        """(acceleration (3 floats), the radial unit vector e, the torque gain 3 n^2)."""
        c, s = self._radial(t)
        n2 = self._n2
        er = c * rx + s * ry
        return (
            (n2 * (3.0 * er * c - rx), n2 * (3.0 * er * s - ry), -n2 * rz),
            (c, s, 0.0),
            3.0 * n2,
        )

    def _nonlinear_loads(self, t, rx, ry, rz):
        c, s = self._radial(t)
        a, n2 = self._a, self._n2
        q = (2.0 * (c * rx + s * ry) + (rx * rx + ry * ry + rz * rz) / a) / a
        lq = math.log1p(q)
        f = a * math.expm1(-1.5 * lq)
        scale = math.exp(-1.5 * lq)
        acc = (-n2 * (scale * rx + f * c), -n2 * (scale * ry + f * s), -n2 * scale * rz)
        dx, dy, dz = a * c + rx, a * s + ry, rz
        d = math.sqrt(dx * dx + dy * dy + dz * dz)
        return acc, (dx / d, dy / d, dz / d), 3.0 * self._mu / d**3

    def derivative(self, t, x):
        """
        Return dx/dt (13 floats) of the packed state ``x`` at time ``t`` [s].

        ``x`` = [r (3), v (3), quaternion (4, [x, y, z, w]), w (3)] (:meth:`pack`), a sequence of
        floats; scalar Python (a plant integrating the target with its own stages calls this).
        """
        rx, ry, rz, vx, vy, vz, qx, qy, qz, qw, wx, wy, wz = x
        I00, I01, I02, I10, I11, I12, I20, I21, I22 = self._I
        J00, J01, J02, J10, J11, J12, J20, J21, J22 = self._Iinv
        hx = I00 * wx + I01 * wy + I02 * wz
        hy = I10 * wx + I11 * wy + I12 * wz
        hz = I20 * wx + I21 * wy + I22 * wz
        tx = hy * wz - hz * wy  # -(w x I w) = (I w) x w
        ty = hz * wx - hx * wz
        tz = hx * wy - hy * wx
        ax, ay, az = self._g
        if self._loads is not None:
            (ax, ay, az), (ex, ey, ez), gain = self._loads(t, rx, ry, rz)
            # e in body axes: R' e (R of the quaternion, columns = body axes in the world)
            R = _rotation(qx, qy, qz, qw)
            bx = R[0] * ex + R[3] * ey + R[6] * ez
            by = R[1] * ex + R[4] * ey + R[7] * ez
            bz = R[2] * ex + R[5] * ey + R[8] * ez
            ix = I00 * bx + I01 * by + I02 * bz
            iy = I10 * bx + I11 * by + I12 * bz
            iz = I20 * bx + I21 * by + I22 * bz
            tx += gain * (by * iz - bz * iy)
            ty += gain * (bz * ix - bx * iz)
            tz += gain * (bx * iy - by * ix)
        # q' = q (x) [w/2; 0] (body-frame angular velocity)
        return (
            vx,
            vy,
            vz,
            ax,
            ay,
            az,
            0.5 * (qw * wx + qy * wz - qz * wy),
            0.5 * (qw * wy + qz * wx - qx * wz),
            0.5 * (qw * wz + qx * wy - qy * wx),
            -0.5 * (qx * wx + qy * wy + qz * wz),
            J00 * tx + J01 * ty + J02 * tz,
            J10 * tx + J11 * ty + J12 * tz,
            J20 * tx + J21 * ty + J22 * tz,
        )

    def _rk4(self, t, x, h):
        f = self.derivative
        k1 = f(t, x)
        h2 = 0.5 * h
        k2 = f(t + h2, [a + h2 * b for a, b in zip(x, k1)])
        k3 = f(t + h2, [a + h2 * b for a, b in zip(x, k2)])
        k4 = f(t + h, [a + h * b for a, b in zip(x, k3)])
        h6 = h / 6.0
        y = [a + h6 * (b + 2.0 * (c + d) + e) for a, b, c, d, e in zip(x, k1, k2, k3, k4)]
        n = math.sqrt(y[6] * y[6] + y[7] * y[7] + y[8] * y[8] + y[9] * y[9])
        y[6], y[7], y[8], y[9] = y[6] / n, y[7] / n, y[8] / n, y[9] / n
        return y

    def _step_size(self, x):
        w = math.sqrt(x[10] * x[10] + x[11] * x[11] + x[12] * x[12])
        if self.orbit is not None:
            w = max(w, self.orbit.mean_motion)
        return min(self.max_step, self.max_angle / w) if w > 0 else self.max_step

    def _advance(self, t, x, t_end):
        """Integrate the packed state x from ``t`` to ``t_end`` (forward, or backward)."""
        direction = 1.0 if t_end >= t else -1.0
        while (t_end - t) * direction > 0:
            h = self._step_size(x)
            remaining = abs(t_end - t)
            if h >= remaining * (1.0 - 1e-12):
                return t_end, self._rk4(t, x, t_end - t)
            steps = math.ceil(remaining / h)  # equal steps up to t_end (no sliver at the end)
            h = direction * remaining / steps
            x = self._rk4(t, x, h)
            t += h
        return t, x

    # -- public ---------------------------------------------------------------------------------
    @staticmethod
    def pack(state):
        """Return the 13 floats [r, v, quaternion [x, y, z, w], w] of ``state`` (TargetState)."""
        R = chk.rotation('state.R', state.R)
        q = _quaternion(np.asarray(R, dtype=float).tolist())
        return (
            chk.vector('state.r', state.r, 3).tolist()
            + chk.vector('state.v', state.v, 3).tolist()
            + q
            + chk.vector('state.w', state.w, 3).tolist()
        )

    @staticmethod
    def unpack(x):
        """Return the :data:`TargetState` of ``x``, 13 packed floats (:meth:`pack`)."""
        x = [float(v) for v in x]
        n = math.sqrt(sum(v * v for v in x[6:10]))
        R = np.array(_rotation(*(v / n for v in x[6:10]))).reshape(3, 3)
        return TargetState(R, np.array(x[0:3]), np.array(x[3:6]), np.array(x[10:13]))

    def accelerations(self, t, state):
        """
        Return (a (3,), alpha (3,)) at ``state`` and time ``t`` [s].

        a: the CoM's acceleration in the world; alpha: the angular acceleration in the body axes.
        """
        d = self.derivative(float(t), self.pack(state))
        return np.array(d[3:6]), np.array(d[10:13])

    def loads(self, t, state):
        """
        Return (force (3,), torque (3,)) on the body at ``state`` and time ``t``, world axes.

        The torque is about the CoM.

        The orbit's tidal force and gravity-gradient torque (or m g and zero): what the plants
        apply to it (:meth:`spart_ros.core.orbit.CircularOrbit.loads` computes the same).
        """
        R = np.asarray(state.R, dtype=float)
        m = self.target.mass
        if self.orbit is None:
            return m * self.gravity, np.zeros(3)
        f, tau = self.orbit.loads(
            float(t), [m], [state.r], [R], [np.asarray(self.target.inertia, float)]
        )
        return f[0], tau[0]

    def propagate(self, state, t0, times):
        """
        Return the :data:`TargetState` at each of ``times`` (k,) [s], from ``state`` at ``t0``.

        ``times`` at or after ``t0``, in increasing order; RK4 (class docstring).  Returns a
        list of states.
        """
        t0 = chk.scalar('t0', t0)
        times = np.atleast_1d(np.asarray(times, dtype=float))
        if times.ndim != 1 or not np.all(np.isfinite(times)):
            raise InputError(f'times: expected finite times [s], got {chk.given(times)}')
        if times.size and (times[0] < t0 or np.any(np.diff(times) < 0)):
            raise InputError(
                f'times: expected increasing times from t0 = {t0} s on, got {times.tolist()}'
            )
        x, t, out = self.pack(state), t0, []
        for tk in times.tolist():
            t, x = self._advance(t, x, tk)
            out.append(self.unpack(x))
        return out


class FixturePrediction:
    """
    The fixture's predicted motion from an estimate (module docstring).

    ``body``: the :class:`FreeBody`; ``estimate``: a :data:`TargetState` at time ``t`` [s] (in
    the world frame, or in LVLH with ``frame='lvlh'``: R l -> LVLH, r, v relative to LVLH in its
    axes, w relative to LVLH in body axes); ``frame``: 'world' or 'lvlh' (needs the body's
    orbit), the frame of the estimate and of every result.  :meth:`motion` at times from ``t`` on
    (and up to ``max_backward`` s before it: an estimate stamped ahead of the control time,
    integrated back); the states reached are kept every ``max_step`` so that increasing times cost
    one RK4 step each (asking for an earlier time starts again from the nearest kept state).
    """

    def __init__(self, body, estimate, t, frame='world', max_backward=0.5):
        if not isinstance(body, FreeBody):
            raise InputError(f'body: expected a FreeBody, got {chk.given(body)}')
        if frame not in ('world', 'lvlh'):
            raise InputError(f"frame: expected 'world' or 'lvlh', got {frame!r}")
        if frame == 'lvlh' and body.orbit is None:
            raise InputError("frame 'lvlh' needs the body's orbit (FreeBody(target, orbit=...))")
        self.body, self.frame, self.t = body, frame, chk.scalar('t', t)
        self.max_backward = chk.nonnegative('max_backward', max_backward)
        if frame == 'lvlh':
            R, r, v, w = (np.asarray(a, dtype=float) for a in estimate)
            R = chk.rotation('estimate.R', R)
            R_n, r_n, v_b, w_n = body.orbit.from_lvlh(self.t, R, r, R.T @ v, w)
            estimate = TargetState(R_n, r_n, R_n @ v_b, w_n)
        self._times, self._states = [self.t], [body.pack(estimate)]
        R_cf, p_cf = body.target.fixture_in_body
        self._fixture = (tuple(R_cf.ravel().tolist()), tuple(p_cf.tolist()))

    def state(self, t):
        """Return the predicted :data:`TargetState` at time ``t`` [s], world (class docstring)."""
        return self.body.unpack(self._packed(self._time(t)))

    def _time(self, t):
        t = float(t)
        if not t >= self.t - self.max_backward:
            raise InputError(
                f't: {t} s is more than {self.max_backward:g} s before the estimate ({self.t} s): '
                'the prediction runs forward (an estimate stamped ahead of the control time by '
                'up to max_backward is taken back)'
            )
        return t

    def _packed(self, t):
        """Return the packed state at ``t``, world (see :meth:`state`)."""
        body, times, states = self.body, self._times, self._states
        if t < self.t:  # an estimate stamped after t (clock skew, a late control tick)
            return body._advance(self.t, states[0], t)[1]
        while times[-1] + body.max_step <= t:  # a state kept every max_step
            t_next, x = body._advance(times[-1], states[-1], times[-1] + body.max_step)
            times.append(t_next)
            states.append(x)
        k = len(times) - 1 if t >= times[-1] else int(np.searchsorted(times, t, 'right')) - 1
        return body._advance(times[k], states[k], t)[1]

    def motion(self, t):
        """
        Return the fixture's :data:`FixtureMotion` at time ``t`` [s], in the prediction's frame.

        Pose, twist and acceleration (its dynamics' accelerations at the predicted state).
        """
        t = self._time(t)
        body = self.body
        x = self._packed(t)
        d = body.derivative(t, x)
        m = _fixture_motion(self._fixture, x, d)
        if self.frame == 'world':
            return m
        return _motion_in_lvlh(body.orbit, t, m)

    def target_state(self, t):
        """Return the predicted :data:`TargetState` at ``t`` in the prediction's frame."""
        state = self.state(t)
        if self.frame == 'world':
            return state
        R_l, r_l, v_b, w_l = self.body.orbit.to_lvlh(
            float(t), state.R, state.r, state.R.T @ state.v, state.w
        )
        return TargetState(R_l, r_l, R_l @ v_b, w_l)


def _fixture_motion(fixture, x, d):
    """Return the FixtureMotion of the packed state ``x`` and its derivative ``d`` (world)."""
    (F00, F01, F02, F10, F11, F12, F20, F21, F22), (fx, fy, fz) = fixture
    R00, R01, R02, R10, R11, R12, R20, R21, R22 = _rotation(*x[6:10])
    wx, wy, wz = x[10:13]
    bx, by, bz = d[10:13]
    rx, ry, rz = (
        R00 * fx + R01 * fy + R02 * fz,
        R10 * fx + R11 * fy + R12 * fz,
        R20 * fx + R21 * fy + R22 * fz,
    )
    ox, oy, oz = (
        R00 * wx + R01 * wy + R02 * wz,
        R10 * wx + R11 * wy + R12 * wz,
        R20 * wx + R21 * wy + R22 * wz,
    )
    ax, ay, az = (
        R00 * bx + R01 * by + R02 * bz,
        R10 * bx + R11 * by + R12 * bz,
        R20 * bx + R21 * by + R22 * bz,
    )
    ux, uy, uz = oy * rz - oz * ry, oz * rx - ox * rz, ox * ry - oy * rx  # w x rho
    R = np.array(
        [
            [
                R00 * F00 + R01 * F10 + R02 * F20,
                R00 * F01 + R01 * F11 + R02 * F21,
                R00 * F02 + R01 * F12 + R02 * F22,
            ],
            [
                R10 * F00 + R11 * F10 + R12 * F20,
                R10 * F01 + R11 * F11 + R12 * F21,
                R10 * F02 + R11 * F12 + R12 * F22,
            ],
            [
                R20 * F00 + R21 * F10 + R22 * F20,
                R20 * F01 + R21 * F11 + R22 * F21,
                R20 * F02 + R21 * F12 + R22 * F22,
            ],
        ]
    )
    twist = np.array([ox, oy, oz, x[3] + ux, x[4] + uy, x[5] + uz])
    acc = np.array(
        [
            ax,
            ay,
            az,
            d[3] + ay * rz - az * ry + oy * uz - oz * uy,
            d[4] + az * rx - ax * rz + oz * ux - ox * uz,
            d[5] + ax * ry - ay * rx + ox * uy - oy * ux,
        ]
    )
    return FixtureMotion(R, np.array([x[0] + rx, x[1] + ry, x[2] + rz]), twist, acc)


def _motion_in_lvlh(orbit, t, m):
    """Return a FixtureMotion in N in LVLH (rates relative to LVLH, which turns at (0, 0, n))."""
    C = orbit.lvlh_rotation(t)
    W = orbit.angular_velocity
    R, p = C.T @ m.R, C.T @ m.p
    omega = C.T @ m.twist[0:3] - W
    v = C.T @ m.twist[3:6] - _cross(W, p)
    alpha = C.T @ m.acceleration[0:3] - _cross(W, omega)
    a = C.T @ m.acceleration[3:6] - 2.0 * _cross(W, v) - _cross(W, _cross(W, p))
    return FixtureMotion(R, p, np.concatenate([omega, v]), np.concatenate([alpha, a]))
