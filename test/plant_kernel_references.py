"""
The numpy code the plants' and the controller's compiled kernels replaced (issue 35): references.

Each function is that code as it was on main before the kernels (the joints' dissipation step of
spart_ros.sim.joint_dissipation, the coupled branch of the friction compensation), taking the
object it was a method of; test_compiled_plant_kernels.py checks the kernels against them.
"""

import numpy as np

MAX_ITERATIONS = 60
_LOG2 = np.log(2.0)


def _log_cosh(x):
    a = np.abs(x)
    return a + np.log1p(np.exp(-2.0 * a)) - _LOG2


def _potential(law, x):
    w = law._joints(x)
    v = law.velocity
    return float(np.dot(0.5 * law.damping, w * w) + np.dot(law.friction * v, _log_cosh(w / v)))


def implicit_velocity(law, M, r, u0, h, joints):
    """Return the backward-Euler velocities of JointDissipation (Newton's method, line search)."""
    A = np.asarray(M, dtype=float) / h
    u0 = np.asarray(u0, dtype=float)
    r = np.asarray(r, dtype=float)
    idx = np.arange(len(u0))[joints] if isinstance(joints, slice) else np.asarray(joints)
    block = np.ix_(idx, idx)
    G = law.G
    tolerance = 1e-13 * (1.0 + np.abs(r).max(initial=0.0) + law.friction.max(initial=0.0))

    def phi(x):
        du = x - u0
        return 0.5 * float(du @ (A @ du)) - float(r @ x) + _potential(law, x[idx])

    def gradient(x):
        g = A @ (x - u0) - r
        g[idx] += law.forces(x[idx])
        return g

    u = u0.copy()
    value, grad = None, gradient(u)
    for _ in range(MAX_ITERATIONS):
        size = np.abs(grad).max()
        if size <= tolerance:
            break
        H = A.copy()
        s = law.slopes(u[idx])
        H[block] += np.diag(s) if G is None else G.T @ (s[:, None] * G)
        step = np.linalg.solve(H, -grad)
        slope = float(grad @ step)
        t = 1.0
        while True:
            trial = u + t * step
            trial_grad = gradient(trial)
            if np.abs(trial_grad).max() <= 0.5 * size or t < 1e-10:
                trial_value = None
                break
            if value is None:
                value = phi(u)
            trial_value = phi(trial)
            if trial_value <= value + 1e-4 * t * slope:
                break
            t *= 0.5
        u, value, grad = trial, trial_value, trial_grad
    return u


def _phi1(x):
    mid = np.clip(x, 1e-4, 40.0)
    return np.where(
        x < 1e-4,
        1.0 - x / 2.0 + x * x / 6.0,
        np.where(x > 40.0, 1.0 / np.maximum(x, 40.0), -np.expm1(-mid) / mid),
    )


def _phi2(x):
    mid = np.clip(x, 1e-3, 40.0)
    big = np.maximum(x, 40.0)
    return np.where(
        x < 1e-3,
        0.5 - x / 6.0 + x * x / 24.0,
        np.where(x > 40.0, (big - 1.0) / (big * big), (mid + np.expm1(-mid)) / (mid * mid)),
    )


def _decay(x):
    return np.where(x > 40.0, 0.0, np.exp(-np.minimum(x, 40.0)))


def dissipation_step(law, M, r, u0, h, joints):
    """JointDissipation.step in numpy: (u1, u_mean)."""
    M = np.asarray(M, dtype=float)
    r = np.asarray(r, dtype=float)
    u0 = np.asarray(u0, dtype=float)
    idx = np.arange(len(u0))[joints] if isinstance(joints, slice) else np.asarray(joints)
    ustar = implicit_velocity(law, M, r, u0, h, idx) if law.has_friction else u0
    s = law.slopes(ustar[idx])
    S = np.zeros_like(M)
    S[np.ix_(idx, idx)] = np.diag(s) if law.G is None else law.G.T @ (s[:, None] * law.G)
    forcing = r + S @ ustar
    forcing[idx] -= law.forces(ustar[idx])
    L = np.linalg.cholesky(M)
    Li = np.linalg.inv(L)
    lam, V = np.linalg.eigh(Li @ S @ Li.T)
    lam = np.maximum(lam, 0.0)
    z0 = V.T @ (L.T @ u0)
    beta = V.T @ (Li @ forcing)
    x = lam * h
    p1, p2 = _phi1(x), _phi2(x)
    z1 = z0 * _decay(x) + beta * (h * p1)
    zm = z0 * p1 + beta * (h * p2)
    back = Li.T @ V
    return back @ z1, back @ zm


def _psi(x):
    mid = np.clip(x, 1e-4, 40.0)
    return np.where(
        x < 1e-4, 1.0 + x / 2.0 + x * x / 12.0, np.where(x > 40.0, x, -mid / np.expm1(-mid))
    )


def friction_correction(fc, qd, qdd, h, inertia):
    """FrictionCompensation.correction's general branch in numpy (fc: the compensation)."""
    from spart_ros.control.friction_compensation import COUPLED_ABOVE, discrete_weight

    G = fc._G
    w_full = qd + (0.5 * h) * qdd
    wf = w_full if G is None else G @ w_full
    t = np.tanh(wf / fc.velocity)
    s_full = fc.damping + (fc.friction / fc.velocity) * (1.0 - t * t)
    s = s_full if G is None else (G * G).T @ s_full
    m = np.diagonal(inertia)
    x = h * s / np.maximum(m, 1e-300)
    w = qd + discrete_weight(x) * h * qdd
    out = fc.dissipation(w, fc.scale) - fc.dissipation(qd)
    if x.max() <= COUPLED_ABOVE:
        return out
    S = np.diag(s) if G is None else G.T @ (s_full[:, None] * G)
    L = np.linalg.cholesky(inertia)
    Li = np.linalg.inv(L)
    lam, V = np.linalg.eigh(Li @ S @ Li.T)
    y = V.T @ (L.T @ qdd)
    linear = L @ (V @ ((_psi(h * np.maximum(lam, 0.0)) - 1.0) * y))
    return out - S @ (w - qd) + linear


_EPS = 1e-10


def actuators_step(a, t, wheel_speeds):
    """BaseActuation.before_step's rules in numpy on a copy of ``a``'s state: (torques, forces)."""
    w = np.asarray(wheel_speeds, dtype=float)
    tau = np.clip(a.wheel_commands, -a.max_torque, a.max_torque)
    room = a.rotor_inertia / a.dt
    hi = (a.max_speed - w) * room + a.friction * w
    lo = (-a.max_speed - w) * room + a.friction * w
    limited = np.clip(tau, np.minimum(lo, 0.0), np.maximum(hi, 0.0))
    limited = np.where(np.isfinite(a.max_speed), limited, tau)
    cmd = a.thruster_commands
    throttled = np.clip(cmd, 0.0, a.max_force)
    opened_at = a._opened_at.copy()
    opened = ~np.isnan(opened_at)
    want = cmd > 0.0
    held = opened & ~want & (t - opened_at < a.min_on_time - _EPS)
    open_now = want | held
    forces = np.where(a.throttled, throttled, np.where(open_now, a.max_force, 0.0))
    return limited, forces


def required_wrench(control, torque_b, force_b, w_b, alpha_b, speeds):
    """BaseActuatorControl.required_wrench in numpy."""
    speeds = np.asarray(speeds, dtype=float)
    h = control.axes @ (control.Js * speeds)
    spin = control.axes @ (control.Js * (control.axes.T @ alpha_b))
    drag = control.axes @ (control.friction * speeds)
    out = np.empty(6)
    out[0:3] = np.asarray(torque_b, dtype=float) + np.cross(w_b, h) - spin - drag
    out[3:6] = force_b
    return out


def torque_for(dyn, torque_b, force_b):
    """AttitudeDynamics.torque_for in numpy: (torque (3,), u0dot (6,), taum (n,))."""
    H = dyn.H
    thr = np.empty(6)
    thr[0:3] = dyn.R_bc.T @ (torque_b - np.cross(dyn.p_bc, force_b))
    thr[3:6] = dyn.R_b @ force_b
    u0dot = np.empty(6)
    u0dot[0:3] = dyn.alpha_c
    u0dot[3:6] = np.linalg.solve(
        H[3:6, 3:6], thr[3:6] - dyn.tau0_0[3:6] - H[3:6, 0:3] @ dyn.alpha_c
    )
    need = dyn.tau0_0 + H[0:6, 0:6] @ u0dot - thr
    taum = dyn.taum_0 + H[6:, 0:6] @ u0dot
    wheel_torque_b = dyn.R_bc @ need[0:3]
    a = dyn.actuation
    torque = required_wrench(a, wheel_torque_b, np.zeros(3), dyn.w_b, dyn.alpha_b, dyn.speeds)
    return torque[0:3], u0dot, taum
