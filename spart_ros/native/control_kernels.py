"""
Compiled kernels of the controller's per-tick work (numba): what a law computes at every tick.

- :func:`friction_correction`: a computed-torque law's compensation of the joints' damping and
  friction in a digital loop (:mod:`spart_ros.control.friction_compensation`, its general branch:
  the per-joint discrete weights and the coupled joints' exact linear part);
- :func:`attitude_torque`: the torque the reaction wheels must exert on the base under a thrust,
  with the base's angular acceleration imposed (:class:`spart_ros.control.base_actuation.
  AttitudeDynamics`), and :func:`wheel_base_torque`: what the wheels' spin adds to a base torque
  (:meth:`~spart_ros.control.base_actuation.BaseActuatorControl.required_wrench`).

Each is the numpy code it replaces written out (the same formulas; results change by rounding);
no kernel allocates.  Compiled ahead of time with the rest (:mod:`.exports`).
"""

import math

from .kernels import compiled
from .layout import SINGULAR
from .plant_kernels import _cholesky, _lower_inverse, _symmetric_eigen


# --- a computed-torque law's friction compensation (control.friction_compensation) ------------
@compiled(inline='always')
def _discrete_weight(x):
    """c(x) = 1 / (1 - exp(-x)) - 1 / x (x >= 0)."""
    if x < 1e-4:
        return 0.5 + x / 12.0
    if x > 40.0:
        return 1.0 - 1.0 / x
    return -1.0 / math.expm1(-x) - 1.0 / x


@compiled(inline='always')
def _psi(x):
    """Return x / (1 - exp(-x)) (x >= 0)."""
    if x < 1e-4:
        return 1.0 + x / 2.0 + x * x / 12.0
    if x > 40.0:
        return x
    return -x / math.expm1(-x)


@compiled
def _dissipation_efforts(G, has_G, damping, friction, velocity, scale, v, wf, out, sign):
    """Add sign G' (d G v + scale F tanh(G v / velocity)) to out (independent coordinates)."""
    nf = damping.shape[0]
    n = v.shape[0]
    for j in range(nf):
        if has_G:
            acc = 0.0
            for c in range(n):
                acc += G[j, c] * v[c]
            wf[j] = acc
        else:
            wf[j] = v[j]
    for j in range(nf):
        f = damping[j] * wf[j] + (scale * friction[j]) * math.tanh(wf[j] / velocity)
        if has_G:
            for c in range(n):
                out[c] += sign * (G[j, c] * f)
        else:
            out[j] += sign * f


@compiled
def friction_correction(
    qd,
    qdd,
    h,
    inertia,
    damping,
    friction,
    velocity,
    scale,
    G,
    has_G,
    coupled_above,
    work,
    vectors,
    out,
):
    """
    Write into ``out`` (n,) FrictionCompensation.correction's efforts (its general branch).

    f(w) - f(qd) with w = qd + c(h s / m) h qdd per coordinate (s the slopes at qd + h qdd / 2, m
    the diagonal of ``inertia`` (n, n)), and where a coordinate's h s / m exceeds
    ``coupled_above`` the linear part exact for the coupled joints (the eigenproblem of
    L^-1 S L^-T, ``inertia`` = L L').  The law per full joint: ``damping``, ``friction`` (n_full,),
    ``velocity``, the Coulomb part times ``scale``; full = ``G`` (n_full, n) independent when
    ``has_G``.  Scratch ``work`` (5, n, n), ``vectors`` (10, max(n, n_full)).  Returns 0, or
    -SINGULAR when ``inertia`` is not positive definite.
    """
    n = qd.shape[0]
    nf = damping.shape[0]
    wf, sf = vectors[0, :nf], vectors[1, :nf]
    s, x, w, y, z = vectors[2, :n], vectors[3, :n], vectors[4, :n], vectors[5, :n], vectors[6, :n]
    for c in range(n):
        w[c] = qd[c] + (0.5 * h) * qdd[c]  # the slopes at the period's middle
    for j in range(nf):
        if has_G:
            acc = 0.0
            for c in range(n):
                acc += G[j, c] * w[c]
            wf[j] = acc
        else:
            wf[j] = w[j]
        t = math.tanh(wf[j] / velocity)
        sf[j] = damping[j] + (friction[j] / velocity) * (1.0 - t * t)
    for c in range(n):
        if has_G:
            acc = 0.0
            for j in range(nf):
                acc += G[j, c] * G[j, c] * sf[j]
            s[c] = acc
        else:
            s[c] = sf[c]
    coupled = False
    for c in range(n):
        x[c] = h * s[c] / max(inertia[c, c], 1e-300)
        coupled = coupled or x[c] > coupled_above
        w[c] = qd[c] + _discrete_weight(x[c]) * h * qdd[c]
    for c in range(n):
        out[c] = 0.0
    _dissipation_efforts(G, has_G, damping, friction, velocity, scale, w, wf, out, 1.0)
    _dissipation_efforts(G, has_G, damping, friction, velocity, 1.0, qd, wf, out, -1.0)
    if not coupled:
        return 0
    S, L, Li, A, V = work[0], work[1], work[2], work[3], work[4]
    for a in range(n):  # S = G' diag(sf) G (diag(s) without G)
        for b in range(n):
            if has_G:
                acc = 0.0
                for j in range(nf):
                    acc += G[j, a] * sf[j] * G[j, b]
                S[a, b] = acc
            else:
                S[a, b] = sf[a] if a == b else 0.0
    if not _cholesky(inertia, L, n):
        return -SINGULAR
    _lower_inverse(L, Li, n)
    for i in range(n):  # A = Li S Li'
        for j in range(n):
            acc = 0.0
            for k in range(j + 1):
                acc += S[i, k] * Li[j, k]
            V[i, j] = acc
    for i in range(n):
        for j in range(n):
            acc = 0.0
            for k in range(i + 1):
                acc += Li[i, k] * V[k, j]
            A[i, j] = acc
    lam = vectors[7, :n]
    _symmetric_eigen(A, V, lam, n)
    for i in range(n):  # z = L' qdd, y = V' z
        acc = 0.0
        for k in range(i, n):
            acc += L[k, i] * qdd[k]
        z[i] = acc
    for i in range(n):
        acc = 0.0
        for k in range(n):
            acc += V[k, i] * z[k]
        y[i] = (_psi(h * max(lam[i], 0.0)) - 1.0) * acc
    for i in range(n):  # z = V y, linear = L z
        acc = 0.0
        for k in range(n):
            acc += V[i, k] * y[k]
        z[i] = acc
    for i in range(n):
        acc = 0.0
        for k in range(i + 1):
            acc += L[i, k] * z[k]
        # out - S (w - qd) + linear
        sw = 0.0
        for k in range(n):
            sw += S[i, k] * (w[k] - qd[k])
        out[i] += acc - sw
    return 0


# --- the base's attitude under reaction wheels (control.base_actuation) ----------------------
@compiled
def wheel_base_torque(axes, Js, friction, speeds, w_b, alpha_b, torque_b, out):
    """
    Set ``out`` (3,) = torque_b + w_b x h - sum_i J_i a_i (a_i . alpha_b) - sum_i b_i w_i a_i.

    What the reaction wheels' spin adds to the base torque ``torque_b`` (required_wrench's torque
    rows): ``axes`` (3, n_w) a_i in b, ``Js`` spin inertias, ``friction`` b_i, ``speeds`` w_i
    relative to the base, h = sum_i J_i w_i a_i; ``w_b``, ``alpha_b`` the base's angular velocity
    and acceleration in b.  Returns 0.
    """
    h0 = h1 = h2 = 0.0
    s0 = s1 = s2 = 0.0
    d0 = d1 = d2 = 0.0
    for i in range(Js.shape[0]):
        a0, a1, a2 = axes[0, i], axes[1, i], axes[2, i]
        m = Js[i] * speeds[i]
        h0 += a0 * m
        h1 += a1 * m
        h2 += a2 * m
        g = Js[i] * (a0 * alpha_b[0] + a1 * alpha_b[1] + a2 * alpha_b[2])
        s0 += a0 * g
        s1 += a1 * g
        s2 += a2 * g
        b = friction[i] * speeds[i]
        d0 += a0 * b
        d1 += a1 * b
        d2 += a2 * b
    w0, w1, w2 = w_b[0], w_b[1], w_b[2]
    out[0] = torque_b[0] + (w1 * h2 - w2 * h1) - s0 - d0
    out[1] = torque_b[1] + (w2 * h0 - w0 * h2) - s1 - d1
    out[2] = torque_b[2] + (w0 * h1 - w1 * h0) - s2 - d2
    return 0


@compiled
def attitude_torque(
    H,
    tau0_0,
    taum_0,
    R_bc,
    p_bc,
    R_b,
    alpha_c,
    alpha_b,
    w_b,
    axes,
    Js,
    friction,
    speeds,
    torque_b,
    force_b,
    u0dot,
    taum,
    out,
):
    """
    Set ``out`` (3,): the torque the wheels must exert on the base (in b) under a thrust.

    AttitudeDynamics.torque_for: the thrusters exert (``torque_b``, ``force_b``) at b's origin, in
    b; with the base's angular acceleration imposed (``alpha_c`` in the base CoM frame, ``alpha_b``
    in b) the linear rows of H (6 + n, 6 + n) u = tau0_0 + ... decide the CoM acceleration, the
    angular rows the torque the base needs, to which the wheels' spin adds
    (:func:`wheel_base_torque`).  ``tau0_0`` (6,), ``taum_0`` (n,): inverse dynamics with a zero
    base acceleration; ``R_bc``, ``p_bc``: the base CoM frame in b; ``R_b``: b in the world.
    Writes ``u0dot`` (6,) and ``taum`` (n,) (the joint efforts of that base acceleration).  Returns
    0, or -SINGULAR when H's linear block is singular.
    """
    n = taum.shape[0]
    # the thrusters' generalized force in SPART's base coordinates: [R_bc' (t - p x f); R_b f]
    c0 = torque_b[0] - (p_bc[1] * force_b[2] - p_bc[2] * force_b[1])
    c1 = torque_b[1] - (p_bc[2] * force_b[0] - p_bc[0] * force_b[2])
    c2 = torque_b[2] - (p_bc[0] * force_b[1] - p_bc[1] * force_b[0])
    t0 = R_bc[0, 0] * c0 + R_bc[1, 0] * c1 + R_bc[2, 0] * c2
    t1 = R_bc[0, 1] * c0 + R_bc[1, 1] * c1 + R_bc[2, 1] * c2
    t2 = R_bc[0, 2] * c0 + R_bc[1, 2] * c1 + R_bc[2, 2] * c2
    f0 = R_b[0, 0] * force_b[0] + R_b[0, 1] * force_b[1] + R_b[0, 2] * force_b[2]
    f1 = R_b[1, 0] * force_b[0] + R_b[1, 1] * force_b[1] + R_b[1, 2] * force_b[2]
    f2 = R_b[2, 0] * force_b[0] + R_b[2, 1] * force_b[1] + R_b[2, 2] * force_b[2]
    u0dot[0], u0dot[1], u0dot[2] = alpha_c[0], alpha_c[1], alpha_c[2]
    # H_ll a = f - tau0_0,l - H_la alpha (3 x 3, Gaussian elimination with partial pivoting)
    A00, A01, A02 = H[3, 3], H[3, 4], H[3, 5]
    A10, A11, A12 = H[4, 3], H[4, 4], H[4, 5]
    A20, A21, A22 = H[5, 3], H[5, 4], H[5, 5]
    b0 = f0 - tau0_0[3] - (H[3, 0] * alpha_c[0] + H[3, 1] * alpha_c[1] + H[3, 2] * alpha_c[2])
    b1 = f1 - tau0_0[4] - (H[4, 0] * alpha_c[0] + H[4, 1] * alpha_c[1] + H[4, 2] * alpha_c[2])
    b2 = f2 - tau0_0[5] - (H[5, 0] * alpha_c[0] + H[5, 1] * alpha_c[1] + H[5, 2] * alpha_c[2])
    if abs(A10) > abs(A00) and abs(A10) >= abs(A20):
        A00, A01, A02, b0, A10, A11, A12, b1 = A10, A11, A12, b1, A00, A01, A02, b0
    elif abs(A20) > abs(A00):
        A00, A01, A02, b0, A20, A21, A22, b2 = A20, A21, A22, b2, A00, A01, A02, b0
    if A00 == 0.0:
        return -SINGULAR
    m1, m2 = A10 / A00, A20 / A00
    A11, A12, b1 = A11 - m1 * A01, A12 - m1 * A02, b1 - m1 * b0
    A21, A22, b2 = A21 - m2 * A01, A22 - m2 * A02, b2 - m2 * b0
    if abs(A21) > abs(A11):
        A11, A12, b1, A21, A22, b2 = A21, A22, b2, A11, A12, b1
    if A11 == 0.0:
        return -SINGULAR
    m2 = A21 / A11
    A22, b2 = A22 - m2 * A12, b2 - m2 * b1
    if A22 == 0.0:
        return -SINGULAR
    x2 = b2 / A22
    x1 = (b1 - A12 * x2) / A11
    x0 = (b0 - A01 * x1 - A02 * x2) / A00
    u0dot[3], u0dot[4], u0dot[5] = x0, x1, x2
    # the angular rows: what the base needs beyond the thrust (a pure torque)
    g0 = g1 = g2 = 0.0
    for k in range(6):
        g0 += H[0, k] * u0dot[k]
        g1 += H[1, k] * u0dot[k]
        g2 += H[2, k] * u0dot[k]
    e0, e1, e2 = tau0_0[0] + g0 - t0, tau0_0[1] + g1 - t1, tau0_0[2] + g2 - t2
    for j in range(n):
        acc = 0.0
        for k in range(6):
            acc += H[6 + j, k] * u0dot[k]
        taum[j] = taum_0[j] + acc
    # the wheels' part, in b: R_bc need, plus what their spin adds
    out[0] = R_bc[0, 0] * e0 + R_bc[0, 1] * e1 + R_bc[0, 2] * e2
    out[1] = R_bc[1, 0] * e0 + R_bc[1, 1] * e1 + R_bc[1, 2] * e2
    out[2] = R_bc[2, 0] * e0 + R_bc[2, 1] * e1 + R_bc[2, 2] * e2
    return wheel_base_torque(axes, Js, friction, speeds, w_b, alpha_b, out, out)


@compiled
def wheel_state(speeds, tau_max, friction, fast_speed, max_speed, axes, Js, lo, hi, h):
    """
    Set the wheels' torque bounds ``lo``, ``hi`` and momentum ``h`` (3,); return max |w| / w_max.

    BaseActuatorControl.torque_bounds and wheel_momentum: +- ``tau_max``, one-sided (the torque
    ``friction`` w that keeps the speed) for a wheel at ``fast_speed`` or faster; h = sum_i J_i w_i
    a_i in b.  The largest fraction of the speed limit is returned (0 without wheels).
    """
    largest = 0.0
    h[0] = h[1] = h[2] = 0.0
    for i in range(speeds.shape[0]):
        w = speeds[i]
        lo[i], hi[i] = -tau_max[i], tau_max[i]
        if abs(w) >= fast_speed[i]:
            hold = friction[i] * w
            if w > 0.0:
                hi[i] = min(max(hold, lo[i]), hi[i])
            elif w < 0.0:
                lo[i] = min(max(hold, lo[i]), hi[i])
        m = Js[i] * w
        h[0] += axes[0, i] * m
        h[1] += axes[1, i] * m
        h[2] += axes[2, i] * m
        largest = max(largest, abs(w) / max_speed[i])
    return largest


@compiled
def thruster_pulses(elapsed, dt, on_time, force, throttled, f_max, B, thrusters, wrench):
    """
    Set the thrusters' forces now (PWM of the cycle) and their ``wrench`` (6,) = B f.

    On/off: ``f_max`` while ``elapsed + dt / 2`` is within its pulse ``on_time``; throttled
    (``throttled`` 1.0): its ``force`` through the cycle.  Returns the sum of the forces.
    """
    total = 0.0
    for j in range(thrusters.shape[0]):
        if throttled[j] != 0.0:
            f = force[j]
        else:
            f = f_max[j] if elapsed + 0.5 * dt < on_time[j] - 1e-12 else 0.0
        thrusters[j] = f
        total += f
    for r in range(6):
        acc = 0.0
        for j in range(thrusters.shape[0]):
            acc += B[r, j] * thrusters[j]
        wrench[r] = acc
    return total


@compiled
def wheel_torques(pinv, target, lo, hi, torque_map, thrust, wheels, achieved):
    """
    Set ``wheels`` = pinv target, ``achieved`` (6,) = thrust + the wheels' torque; return the miss.

    The least-norm wheel torques for the torque ``target`` (3,) (``pinv`` (n_w, 3)) and, when they
    are within [``lo``, ``hi``], the residual |target - torque_map wheels|; -1.0 when one is out of
    its bounds (the caller's bounded least squares then).
    """
    inside = True
    for i in range(wheels.shape[0]):
        wheels[i] = pinv[i, 0] * target[0] + pinv[i, 1] * target[1] + pinv[i, 2] * target[2]
        inside = inside and lo[i] <= wheels[i] <= hi[i]
    if not inside:
        return -1.0
    miss = 0.0
    for r in range(6):
        achieved[r] = thrust[r]
    for r in range(3):
        acc = 0.0
        for i in range(wheels.shape[0]):
            acc += torque_map[r, i] * wheels[i]
        achieved[r] += acc
        d = target[r] - acc
        miss += d * d
    return math.sqrt(miss)


# --- the controller's per-tick checks (control.tolerances, control.continuity) --------------
@compiled
def first_violation(tolerance, reference, measured):
    """
    Return the first k with tolerance[k] > 0 and |reference[k] - measured[k]| > tolerance[k].

    -1 when none (tolerances.violation's test of one component); -2 when the lengths differ.
    """
    if reference.shape[0] != tolerance.shape[0] or measured.shape[0] != tolerance.shape[0]:
        return -2
    for k in range(tolerance.shape[0]):
        tol = tolerance[k]
        if tol > 0.0 and abs(reference[k] - measured[k]) > tol:
            return k
    return -1


@compiled
def largest_excess(reference, measured, limit):
    """
    Return argmax(|reference - measured| - limit) when an |error| passes its limit, else -1.

    Continuity.new_fault's test (the first of equal excesses, as numpy's argmax: the largest is one
    that exceeds); -2 when the lengths differ.
    """
    if reference.shape[0] != limit.shape[0] or measured.shape[0] != limit.shape[0]:
        return -2
    best, k = 0.0, -1
    for i in range(limit.shape[0]):
        e = abs(reference[i] - measured[i])
        if e > limit[i]:
            d = e - limit[i]
            if k < 0 or d > best:
                best, k = d, i
    return k


@compiled
def jump_excess(q, last_q, qd, last_qd, dt, tolerance):
    """
    Return the coordinate of a jump of the measured positions, or -1 (Continuity._jump's test).

    A change dq = q - last_q outside [min(v0, v1) dt, max(v0, v1) dt] widened by ``tolerance``
    (v0 = last_qd, v1 = qd): the argmax of max(low - dq, dq - high) - tolerance when it is > 0.
    Only when some |dq| exceeds the tolerance (else -1 at once); -2 when the lengths differ.
    """
    n = q.shape[0]
    if last_q.shape[0] != n or qd.shape[0] != n or last_qd.shape[0] != n:
        return -2
    large = False
    for i in range(n):
        if abs(q[i] - last_q[i]) > tolerance:
            large = True
            break
    if not large:
        return -1
    best, k = -math.inf, -1
    for i in range(n):
        dq = q[i] - last_q[i]
        low = min(qd[i], last_qd[i]) * dt
        high = max(qd[i], last_qd[i]) * dt
        beyond = max(low - dq, dq - high) - tolerance
        if beyond > best:
            best, k = beyond, i
    return k if best > 0.0 else -1


# --- the joint reference (control.trajectory) ------------------------------------------------
@compiled
def quintic_sample(coefficients, i, x, p, v, a):
    """
    Set the position ``p``, velocity ``v``, acceleration ``a`` (n,) of segment ``i`` at ``x``.

    QuinticTrajectory.sample: p = sum_m c_m x^m over the segment's coefficients c (6, n) of
    ``coefficients`` (k, 6, n), v and a its derivatives (x: the time into the segment).  Returns 0.
    """
    c = coefficients[i]
    x2 = x * x
    x3 = x2 * x
    x4 = x3 * x
    x5 = x4 * x
    for j in range(p.shape[0]):
        c0, c1, c2, c3, c4, c5 = c[0, j], c[1, j], c[2, j], c[3, j], c[4, j], c[5, j]
        p[j] = c0 + c1 * x + c2 * x2 + c3 * x3 + c4 * x4 + c5 * x5
        v[j] = c1 + 2.0 * c2 * x + 3.0 * c3 * x2 + 4.0 * c4 * x3 + 5.0 * c5 * x4
        a[j] = 2.0 * c2 + 6.0 * c3 * x + 12.0 * c4 * x2 + 20.0 * c5 * x3
    return 0


# --- the free-flying law's base (control.effort_laws.FreeFlying) ------------------------------
@compiled
def free_flying_base(R_b, p_b, v_b, w_b, R_d, p_d, gains, R_bc, p_bc, a_b, alpha_b, u0dot):
    """
    Set the base PD accelerations ``a_b``, ``alpha_b`` (3,) in b and SPART's ``u0dot`` (6,).

    FreeFlying.base_acceleration: alpha_b = kp_r rotvec(R_b' R_d) - kd_r w_b, a_b = kp_p R_b'
    (p_d - p_b) - kd_p v_b (``gains`` = kp_p, kd_p, kp_r, kd_r; the rotation vector as
    core.rigid_motion's, angle in [0, pi]); then BaseFrames.base_acceleration: u0dot =
    [R_bc' alpha_b; R_b (a_b + alpha_b x p_bc + w_b x (w_b x p_bc))].  Returns 0.
    """
    # E = R_b' R_d
    e00 = R_b[0, 0] * R_d[0, 0] + R_b[1, 0] * R_d[1, 0] + R_b[2, 0] * R_d[2, 0]
    e01 = R_b[0, 0] * R_d[0, 1] + R_b[1, 0] * R_d[1, 1] + R_b[2, 0] * R_d[2, 1]
    e02 = R_b[0, 0] * R_d[0, 2] + R_b[1, 0] * R_d[1, 2] + R_b[2, 0] * R_d[2, 2]
    e10 = R_b[0, 1] * R_d[0, 0] + R_b[1, 1] * R_d[1, 0] + R_b[2, 1] * R_d[2, 0]
    e11 = R_b[0, 1] * R_d[0, 1] + R_b[1, 1] * R_d[1, 1] + R_b[2, 1] * R_d[2, 1]
    e12 = R_b[0, 1] * R_d[0, 2] + R_b[1, 1] * R_d[1, 2] + R_b[2, 1] * R_d[2, 2]
    e20 = R_b[0, 2] * R_d[0, 0] + R_b[1, 2] * R_d[1, 0] + R_b[2, 2] * R_d[2, 0]
    e21 = R_b[0, 2] * R_d[0, 1] + R_b[1, 2] * R_d[1, 1] + R_b[2, 2] * R_d[2, 1]
    e22 = R_b[0, 2] * R_d[0, 2] + R_b[1, 2] * R_d[1, 2] + R_b[2, 2] * R_d[2, 2]
    # its rotation vector (rigid_motion._rotation_vector)
    s0, s1, s2 = 0.5 * (e21 - e12), 0.5 * (e02 - e20), 0.5 * (e10 - e01)  # sin(angle) axis
    s = math.sqrt(s0 * s0 + s1 * s1 + s2 * s2)
    c = 0.5 * (e00 + e11 + e22 - 1.0)
    angle = math.atan2(s, c)
    if s > 1e-6:
        f = angle / s
        r0, r1, r2 = f * s0, f * s1, f * s2
    elif c > 0:  # small angle: angle / sin(angle) ~ 1 + angle^2 / 6
        f = 1.0 + angle * angle / 6.0
        r0, r1, r2 = f * s0, f * s1, f * s2
    else:  # near pi: the axis from the symmetric part (R + R') / 2 = c I + (1 - c) a a'
        d = 1.0 - c
        b00, b11, b22 = (e00 - c) / d, (e11 - c) / d, (e22 - c) / d
        b01, b02, b12 = 0.5 * (e01 + e10) / d, 0.5 * (e02 + e20) / d, 0.5 * (e12 + e21) / d
        if b00 >= b11 and b00 >= b22:
            g = math.sqrt(max(b00, 1e-300))
            x0, x1, x2 = b00 / g, b01 / g, b02 / g
        elif b11 >= b22:
            g = math.sqrt(max(b11, 1e-300))
            x0, x1, x2 = b01 / g, b11 / g, b12 / g
        else:
            g = math.sqrt(max(b22, 1e-300))
            x0, x1, x2 = b02 / g, b12 / g, b22 / g
        if x0 * s0 + x1 * s1 + x2 * s2 < 0:
            x0, x1, x2 = -x0, -x1, -x2
        r0, r1, r2 = angle * x0, angle * x1, angle * x2
    kp_p, kd_p, kp_r, kd_r = gains[0], gains[1], gains[2], gains[3]
    alpha_b[0] = kp_r * r0 - kd_r * w_b[0]
    alpha_b[1] = kp_r * r1 - kd_r * w_b[1]
    alpha_b[2] = kp_r * r2 - kd_r * w_b[2]
    d0, d1, d2 = p_d[0] - p_b[0], p_d[1] - p_b[1], p_d[2] - p_b[2]
    for k in range(3):
        a_b[k] = kp_p * (R_b[0, k] * d0 + R_b[1, k] * d1 + R_b[2, k] * d2) - kd_p * v_b[k]
    # u0dot: [R_bc' alpha_b; R_b (a_b + alpha_b x p + w x (w x p))]
    for k in range(3):
        u0dot[k] = R_bc[0, k] * alpha_b[0] + R_bc[1, k] * alpha_b[1] + R_bc[2, k] * alpha_b[2]
    px, py, pz = p_bc[0], p_bc[1], p_bc[2]
    w0, w1, w2 = w_b[0], w_b[1], w_b[2]
    wp, ww = w0 * px + w1 * py + w2 * pz, w0 * w0 + w1 * w1 + w2 * w2
    c0 = a_b[0] + (alpha_b[1] * pz - alpha_b[2] * py) + (w0 * wp - px * ww)
    c1 = a_b[1] + (alpha_b[2] * px - alpha_b[0] * pz) + (w1 * wp - py * ww)
    c2 = a_b[2] + (alpha_b[0] * py - alpha_b[1] * px) + (w2 * wp - pz * ww)
    for k in range(3):
        u0dot[3 + k] = R_b[k, 0] * c0 + R_b[k, 1] * c1 + R_b[k, 2] * c2
    return 0


# --- the controller's supervision of a tick (control.supervision, control.controlled_robot) ---
@compiled
def input_problem(q, qd, n, joint_times, index, every, now, timeout, base_time, has_base):
    """
    Return 0 when a tick's inputs are fit to command, else the first problem's code.

    Supervisor.admit's tests in its order (CommandGate.problem, then the state's finiteness):
    1 a command joint's receipt time is NaN (never received: ``joint_times`` at ``index``, or all
    of them when ``every``; none are checked when ``joint_times`` is empty), 2 the oldest is more
    than ``timeout`` before ``now``, 3 the base state's receipt time ``base_time`` is NaN, 4 it is
    too old (when ``has_base``), 5 ``q`` or ``qd`` is not finite, 6 they are not ``n`` long.  The
    caller's own path (numpy) then says why.
    """
    m = joint_times.shape[0] if every else index.shape[0]
    if joint_times.shape[0] > 0 and index.shape[0] > 0:
        oldest = math.inf
        for k in range(m):
            x = joint_times[k] if every else joint_times[index[k]]
            if x != x:
                return 1
            if x < oldest:
                oldest = x
        if now - oldest > timeout:
            return 2
    if has_base:
        if base_time != base_time:
            return 3
        if now - base_time > timeout:
            return 4
    if q.shape[0] != n or qd.shape[0] != n:
        return 6
    for k in range(n):
        if not (math.isfinite(q[k]) and math.isfinite(qd[k])):
            return 5
    return 0


@compiled
def clamp_command(values, index, every, limits, out, clamped):
    """
    Set ``out`` (m,) = the command joints' ``values`` clamped to +- ``limits``; return how many.

    The command joints: ``values`` at ``index`` (all of them when ``every``); ``clamped`` (m,)
    flags those the limits changed (ControlledRobot.command_values: np.maximum then np.minimum,
    the same numbers for finite values).  -1 when one is not finite (nothing is set), -2 when
    ``values`` is too short.
    """
    m = limits.shape[0]
    if every:
        if values.shape[0] != m:
            return -2
    else:
        for k in range(m):
            if index[k] >= values.shape[0]:
                return -2
    for k in range(m):
        v = values[k] if every else values[index[k]]
        if not math.isfinite(v):
            return -1
    count = 0
    for k in range(m):
        v = values[k] if every else values[index[k]]
        lim = limits[k]
        o = max(v, -lim)
        o = min(o, lim)
        out[k] = o
        c = o != v
        clamped[k] = c
        if c:
            count += 1
    return count


# --- a floating base's frames (control.law.BaseFrames) ---------------------------------------
@compiled
def base_frames_floating(R_b, p_b, v_b, w_b, R_bc, p_bc, R0, r0, u0):
    """
    Set SPART's base state R0 (3, 3), r0 (3,), u0 (6,) of the base link's (BaseFrames.floating).

    ``R_b``, ``p_b``: the base link's pose in the world; ``v_b``, ``w_b``: its twist in b;
    ``R_bc``, ``p_bc``: the base CoM frame in b.  R0 = R_b R_bc, r0 = p_b + R_b p_bc, u0 =
    [R_bc' w_b; R_b (v_b + w_b x p_bc)] (numpy's products, term by term).  Returns 0.
    """
    for i in range(3):
        for j in range(3):
            R0[i, j] = R_b[i, 0] * R_bc[0, j] + R_b[i, 1] * R_bc[1, j] + R_b[i, 2] * R_bc[2, j]
        r0[i] = p_b[i] + (R_b[i, 0] * p_bc[0] + R_b[i, 1] * p_bc[1] + R_b[i, 2] * p_bc[2])
        u0[i] = R_bc[0, i] * w_b[0] + R_bc[1, i] * w_b[1] + R_bc[2, i] * w_b[2]
    x, y, z = p_bc[0], p_bc[1], p_bc[2]
    w0, w1, w2 = w_b[0], w_b[1], w_b[2]
    e0 = (0.0 * w0 + z * w1 + -y * w2) + v_b[0]  # -[p]x w = w x p, then + v_b
    e1 = (-z * w0 + 0.0 * w1 + x * w2) + v_b[1]
    e2 = (y * w0 + -x * w1 + 0.0 * w2) + v_b[2]
    for i in range(3):
        u0[3 + i] = R_b[i, 0] * e0 + R_b[i, 1] * e1 + R_b[i, 2] * e2
    return 0


@compiled
def base_link_wrench(R_b, tau0, R_bc, p_bc, torque, force):
    """
    Set SPART's base wrench ``tau0`` (6,) as ``torque``, ``force`` (3,) at b's origin, in b.

    BaseFrames.link_wrench: force = R_b' tau0[3:6], torque = R_bc tau0[0:3] + p_bc x force.
    Returns 0.
    """
    for i in range(3):
        force[i] = R_b[0, i] * tau0[3] + R_b[1, i] * tau0[4] + R_b[2, i] * tau0[5]
    x, y, z = p_bc[0], p_bc[1], p_bc[2]
    f0, f1, f2 = force[0], force[1], force[2]
    c0 = 0.0 * f0 + z * f1 + -y * f2  # -[p]x f = f x p: subtracted
    c1 = -z * f0 + 0.0 * f1 + x * f2
    c2 = y * f0 + -x * f1 + 0.0 * f2
    for i in range(3):
        t = R_bc[i, 0] * tau0[0] + R_bc[i, 1] * tau0[1] + R_bc[i, 2] * tau0[2]
        torque[i] = t - (c0 if i == 0 else c1 if i == 1 else c2)
    return 0


# --- the PD joint acceleration of the effort laws (control.effort_laws._JointLaw) -------------
@compiled
def pd_acceleration(q, qd, position, velocity, acceleration, kp, kd, e, ev, qdd):
    """
    Set qdd (n,) = kp e + acceleration + kd (velocity - qd), e = position - q (n,).

    _JointLaw.joint_acceleration without an integral, numpy's operations in its order (so the
    same numbers): ``e`` and ``ev`` (n,) get the position and velocity errors.  Returns 0; -1
    (nothing set) when the lengths differ.
    """
    n = qdd.shape[0]
    if q.shape[0] != n or qd.shape[0] != n or position.shape[0] != n:
        return -1
    if velocity.shape[0] != n or acceleration.shape[0] != n or kp.shape[0] != n:
        return -1
    if kd.shape[0] != n or e.shape[0] != n or ev.shape[0] != n:
        return -1
    for k in range(n):
        ek = position[k] - q[k]
        e[k] = ek
        a = kp[k] * ek
        a = a + acceleration[k]
        evk = (velocity[k] - qd[k]) * kd[k]
        ev[k] = evk
        qdd[k] = a + evk
    return 0
