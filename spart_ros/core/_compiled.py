"""Compiled float versions of the SPART-named chain (same outputs, SPART layouts).

Kinematics, DiffKinematics, Velocities, I_I, Accelerations and ID dispatch
here for float inputs; the numpy code beside them stays the reference for
symbolic inputs.  The model comes packed as in ``fast.kernels`` (``mi``/``mf``).
"""
import numpy as np
from numba import njit

from .fast.kernels import MASS, IBODY, TJR, TJP, TLR, TLP, AXIS, FIXED, REVOLUTE, PRISMATIC


def packed(robot):
    """(mi, mf) of a numeric robot, built once and kept on the robot."""
    p = getattr(robot, '_packed', None)
    if p is None:
        from .fast import _pack
        p = robot._packed = _pack(robot)
    return p


@njit(cache=True)
def kinematics(mi, mf, R0, r0, qm, RJ, RL, rJ, rL, e, g):
    n = mi[0]
    Rq = np.empty((3, 3))
    for i in range(n):
        p = mi[2 + 3 * i]
        jt = mi[3 + 3 * i]
        qi = mi[4 + 3 * i]
        ax = mf[i + 1, AXIS:AXIS + 3]
        for r in range(3):
            for c in range(3):
                acc = 0.0
                for k in range(3):
                    Rp = R0[r, k] if p == 0 else RL[r, k, p - 1]
                    acc += Rp * mf[i + 1, TJR + 3 * k + c]
                RJ[r, c, i] = acc
            acc = r0[r] if p == 0 else rL[r, p - 1]
            for k in range(3):
                Rp = R0[r, k] if p == 0 else RL[r, k, p - 1]
                acc += Rp * mf[i + 1, TJP + k]
            rJ[r, i] = acc
        # rotation of the joint variable
        if jt == REVOLUTE:
            q = qm[qi]
            cq, sq = np.cos(q), np.sin(q)
            t = 1.0 - cq
            x, y, z = ax[0], ax[1], ax[2]
            Rq[0, 0], Rq[0, 1], Rq[0, 2] = cq + t * x * x, t * x * y - sq * z, t * x * z + sq * y
            Rq[1, 0], Rq[1, 1], Rq[1, 2] = t * x * y + sq * z, cq + t * y * y, t * y * z - sq * x
            Rq[2, 0], Rq[2, 1], Rq[2, 2] = t * x * z - sq * y, t * y * z + sq * x, cq + t * z * z
        else:
            for r in range(3):
                for c in range(3):
                    Rq[r, c] = 1.0 if r == c else 0.0
        shift = qm[qi] if jt == PRISMATIC else 0.0
        for r in range(3):
            # RJq row r
            a0 = RJ[r, 0, i] * Rq[0, 0] + RJ[r, 1, i] * Rq[1, 0] + RJ[r, 2, i] * Rq[2, 0]
            a1 = RJ[r, 0, i] * Rq[0, 1] + RJ[r, 1, i] * Rq[1, 1] + RJ[r, 2, i] * Rq[2, 1]
            a2 = RJ[r, 0, i] * Rq[0, 2] + RJ[r, 1, i] * Rq[1, 2] + RJ[r, 2, i] * Rq[2, 2]
            for c in range(3):
                RL[r, c, i] = a0 * mf[i + 1, TLR + c] + a1 * mf[i + 1, TLR + 3 + c] + a2 * mf[i + 1, TLR + 6 + c]
            com0 = mf[i + 1, TLP] + ax[0] * shift
            com1 = mf[i + 1, TLP + 1] + ax[1] * shift
            com2 = mf[i + 1, TLP + 2] + ax[2] * shift
            rL[r, i] = rJ[r, i] + a0 * com0 + a1 * com1 + a2 * com2
            e[r, i] = RJ[r, 0, i] * ax[0] + RJ[r, 1, i] * ax[1] + RJ[r, 2, i] * ax[2]
            g[r, i] = rL[r, i] - rJ[r, i]


@njit(cache=True)
def velocities(mi, Bij, Bi0, P0, pm, u0, um, t0, tL):
    n = mi[0]
    for r in range(6):
        acc = 0.0
        for c in range(6):
            acc += P0[r, c] * u0[c]
        t0[r] = acc
    for i in range(n):
        p = mi[2 + 3 * i]
        for r in range(6):
            acc = 0.0
            for c in range(6):
                acc += (Bi0[r, c, i] * t0[c]) if p == 0 else (Bij[r, c, i, p - 1] * tL[c, p - 1])
            tL[r, i] = acc
        if mi[3 + 3 * i] != FIXED:
            qd = um[mi[4 + 3 * i]]
            for r in range(6):
                tL[r, i] += pm[r, i] * qd


@njit(cache=True)
def _cross_add(a0, a1, a2, b0, b1, b2, out, col, row0, scale):
    out[row0, col] += scale * (a1 * b2 - a2 * b1)
    out[row0 + 1, col] += scale * (a2 * b0 - a0 * b2)
    out[row0 + 2, col] += scale * (a0 * b1 - a1 * b0)


@njit(cache=True)
def accelerations(mi, t0, tL, P0, pm, Bi0, Bij, u0, um, u0dot, umdot, t0dot, tLdot):
    n = mi[0]
    w = np.empty(3)
    for r in range(3):
        w[r] = P0[r, 0] * u0[0] + P0[r, 1] * u0[1] + P0[r, 2] * u0[2]
    for r in range(6):
        acc = 0.0
        for c in range(6):
            acc += P0[r, c] * u0dot[c]
        t0dot[r] = acc
    t0dot[0] += t0[1] * w[2] - t0[2] * w[1]
    t0dot[1] += t0[2] * w[0] - t0[0] * w[2]
    t0dot[2] += t0[0] * w[1] - t0[1] * w[0]
    for i in range(n):
        p = mi[2 + 3 * i]
        for r in range(6):
            acc = 0.0
            for c in range(6):
                acc += (Bi0[r, c, i] * t0dot[c]) if p == 0 else (Bij[r, c, i, p - 1] * tLdot[c, p - 1])
            tLdot[r, i] = acc
        if p == 0:
            wp0, wp1, wp2, vp0, vp1, vp2 = t0[0], t0[1], t0[2], t0[3], t0[4], t0[5]
        else:
            wp0, wp1, wp2 = tL[0, p - 1], tL[1, p - 1], tL[2, p - 1]
            vp0, vp1, vp2 = tL[3, p - 1], tL[4, p - 1], tL[5, p - 1]
        # d/dt of B_ip: (v_p - v_i) x w_p
        _cross_add(vp0 - tL[3, i], vp1 - tL[4, i], vp2 - tL[5, i], wp0, wp1, wp2, tLdot, i, 3, 1.0)
        if mi[3 + 3 * i] != FIXED:
            k = mi[4 + 3 * i]
            qd, qdd = um[k], umdot[k]
            _cross_add(tL[0, i], tL[1, i], tL[2, i], pm[0, i], pm[1, i], pm[2, i], tLdot, i, 0, qd)
            _cross_add(tL[0, i], tL[1, i], tL[2, i], pm[3, i], pm[4, i], pm[5, i], tLdot, i, 3, qd)
            for r in range(6):
                tLdot[r, i] += pm[r, i] * qdd


@njit(cache=True)
def inertia_in_inertial_frame(mi, mf, R0, RL, I0, Im):
    n = mi[0]
    for i in range(n + 1):
        for r in range(3):
            for c in range(3):
                acc = 0.0
                for a in range(3):
                    Ra = R0[r, a] if i == 0 else RL[r, a, i - 1]
                    for b in range(3):
                        Rb = R0[c, b] if i == 0 else RL[c, b, i - 1]
                        acc += Ra * mf[i, IBODY + 3 * a + b] * Rb
                if i == 0:
                    I0[r, c] = acc
                else:
                    Im[r, c, i - 1] = acc


@njit(cache=True)
def inverse_dynamics(mi, mf, wF0, wFm, t0, tL, t0dot, tLdot, P0, pm, I0, Im, Bij, Bi0, tau0, taum):
    n = mi[0]
    wq = np.empty((6, n))
    wq0 = np.empty(6)
    for i in range(n + 1):
        m = mf[i, MASS]
        for r in range(3):
            if i == 0:
                Iw = I0[r, 0] * t0[0] + I0[r, 1] * t0[1] + I0[r, 2] * t0[2]
                wq0[r] = I0[r, 0] * t0dot[0] + I0[r, 1] * t0dot[1] + I0[r, 2] * t0dot[2] - wF0[r]
                wq0[3 + r] = m * t0dot[3 + r] - wF0[3 + r]
            else:
                wq[r, i - 1] = (Im[r, 0, i - 1] * tLdot[0, i - 1] + Im[r, 1, i - 1] * tLdot[1, i - 1]
                                + Im[r, 2, i - 1] * tLdot[2, i - 1] - wFm[r, i - 1])
                wq[3 + r, i - 1] = m * tLdot[3 + r, i - 1] - wFm[3 + r, i - 1]
        # + w x (I w)
        if i == 0:
            w0, w1, w2 = t0[0], t0[1], t0[2]
            h0 = I0[0, 0] * w0 + I0[0, 1] * w1 + I0[0, 2] * w2
            h1 = I0[1, 0] * w0 + I0[1, 1] * w1 + I0[1, 2] * w2
            h2 = I0[2, 0] * w0 + I0[2, 1] * w1 + I0[2, 2] * w2
            wq0[0] += w1 * h2 - w2 * h1
            wq0[1] += w2 * h0 - w0 * h2
            wq0[2] += w0 * h1 - w1 * h0
        else:
            k = i - 1
            w0, w1, w2 = tL[0, k], tL[1, k], tL[2, k]
            h0 = Im[0, 0, k] * w0 + Im[0, 1, k] * w1 + Im[0, 2, k] * w2
            h1 = Im[1, 0, k] * w0 + Im[1, 1, k] * w1 + Im[1, 2, k] * w2
            h2 = Im[2, 0, k] * w0 + Im[2, 1, k] * w1 + Im[2, 2, k] * w2
            wq[0, k] += w1 * h2 - w2 * h1
            wq[1, k] += w2 * h0 - w0 * h2
            wq[2, k] += w0 * h1 - w1 * h0
    for i in range(n - 1, -1, -1):
        p = mi[2 + 3 * i]
        for r in range(6):
            acc = 0.0
            for c in range(6):
                acc += (Bi0[c, r, i] if p == 0 else Bij[c, r, i, p - 1]) * wq[c, i]
            if p == 0:
                wq0[r] += acc
            else:
                wq[r, p - 1] += acc
    for r in range(6):
        acc = 0.0
        for c in range(6):
            acc += P0[c, r] * wq0[c]
        tau0[r] = acc
    for i in range(n):
        if mi[3 + 3 * i] != FIXED:
            acc = 0.0
            for r in range(6):
                acc += pm[r, i] * wq[r, i]
            taum[mi[4 + 3 * i]] = acc


@njit(cache=True)
def differential_kinematics(mi, branch, R0, r0, rL, e, g, Bij, Bi0, P0, pm):
    n = mi[0]
    Bij[:] = 0.0
    for i in range(n):
        for j in range(n):
            if branch[i, j]:
                for k in range(6):
                    Bij[k, k, i, j] = 1.0
                d0, d1, d2 = rL[0, j] - rL[0, i], rL[1, j] - rL[1, i], rL[2, j] - rL[2, i]
                Bij[3, 1, i, j], Bij[3, 2, i, j] = -d2, d1
                Bij[4, 0, i, j], Bij[4, 2, i, j] = d2, -d0
                Bij[5, 0, i, j], Bij[5, 1, i, j] = -d1, d0
    Bi0[:] = 0.0
    pm[:] = 0.0
    for i in range(n):
        for k in range(6):
            Bi0[k, k, i] = 1.0
        d0, d1, d2 = r0[0] - rL[0, i], r0[1] - rL[1, i], r0[2] - rL[2, i]
        Bi0[3, 1, i], Bi0[3, 2, i] = -d2, d1
        Bi0[4, 0, i], Bi0[4, 2, i] = d2, -d0
        Bi0[5, 0, i], Bi0[5, 1, i] = -d1, d0
        jt = mi[3 + 3 * i]
        if jt == REVOLUTE:
            pm[0, i], pm[1, i], pm[2, i] = e[0, i], e[1, i], e[2, i]
            pm[3, i] = e[1, i] * g[2, i] - e[2, i] * g[1, i]
            pm[4, i] = e[2, i] * g[0, i] - e[0, i] * g[2, i]
            pm[5, i] = e[0, i] * g[1, i] - e[1, i] * g[0, i]
        elif jt == PRISMATIC:
            pm[3, i], pm[4, i], pm[5, i] = e[0, i], e[1, i], e[2, i]
    P0[:] = 0.0
    for r in range(3):
        for c in range(3):
            P0[r, c] = R0[r, c]
        P0[3 + r, 3 + r] = 1.0
