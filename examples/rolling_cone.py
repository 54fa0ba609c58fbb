#!/usr/bin/env python3
"""
The course's rolling cone, in spatial_v2's terms (``spart_ros.spatial_v2``), with quaternions.

A solid cone (height ``h``, half-angle ``alpha``, mass ``m``) lies on its side on a horizontal
plane and rolls on it without slipping, its apex fixed at the origin.  Rolling means the
generator on the plane (the contact line) is at rest: the angular velocity is along it,
w = nu l, one degree of freedom.  The equation of motion is the course's motion-constraint form
in body coordinates (frame B at the apex, z along the cone's axis): with T = [l; 0] (the free
motion) and the spatial inertia I about the apex (``mcI``),

    T' I T nu_dot = T' (I [0; E g] - crf(v) I v - I T_dot nu),   v = T nu,

and the orientation is a quaternion q (B relative to A) integrated from ``rqd(q, w_B)``, E =
``rq(q)``.  The cone's axis turns about the vertical at Omega = -nu tan(alpha) while the cone
spins about its own axis at -Omega / sin(alpha) (closed form: R(t) = Rz(Omega t) R(0)
Rz(-Omega t / sin(alpha))), so after one circuit (T = 2 pi / Omega) it has turned once about the
vertical and 1 / sin(alpha) times about its axis: with alpha = 30 deg twice, and the integrated
quaternion comes back as -q(0) (the same orientation: 2 pi about the vertical flips a
quaternion's sign, 4 pi about the axis does not).

    python examples/rolling_cone.py [--steps 400] [--alpha-deg 30]

Prints the rolling rate's drift, the distance of q(T) from -q(0) and from the closed form.
"""

import argparse
import math
import sys

import numpy as np
from spart_ros import spatial_v2 as sv

G = np.array([0.0, 0.0, -9.81])


def cone_inertia(m, h, alpha):
    """Return the spatial inertia (6, 6) of a solid cone about its apex, axis z (mcI)."""
    r = h * math.tan(alpha)
    transverse = 3.0 / 20.0 * m * r * r + 3.0 / 80.0 * m * h * h  # about the CoM
    axial = 3.0 / 10.0 * m * r * r
    return sv.mcI(m, [0.0, 0.0, 0.75 * h], np.diag([transverse, transverse, axial]))


def contact_line(E):
    """Return the contact line's direction l (3,) in A coordinates, and its axis a (3,)."""
    a = E[2]  # the cone's axis (B's z) in A coordinates: the third row of E
    horizontal = a - a[2] * np.array([0.0, 0.0, 1.0])
    return horizontal / np.linalg.norm(horizontal), a


def derivative(state, inertia):
    """Return d/dt of the state [q (4,); nu]: rqd and the constrained equation of motion."""
    q, nu = state[:4], state[4]
    E = sv.rq(q)
    l_A, a = contact_line(E)
    w_A = nu * l_A
    h = a - a[2] * np.array([0.0, 0.0, 1.0])
    h_dot = np.cross(w_A, a)
    h_dot[2] = 0.0
    l_dot_A = (h_dot - l_A * (l_A @ h_dot)) / np.linalg.norm(h)
    T = np.r_[E @ l_A, np.zeros(3)]  # the free motion, body coordinates
    T_dot = np.r_[E @ l_dot_A, np.zeros(3)]  # (w_B x l_B = 0: only l_A's own change)
    v = T * nu
    rhs = inertia @ np.r_[np.zeros(3), E @ G] - sv.crf(v) @ inertia @ v - inertia @ T_dot * nu
    nu_dot = (T @ rhs) / (T @ inertia @ T)
    return np.r_[sv.rqd(q, v[:3]), nu_dot]


def closed_form(t, omega, alpha, R0):
    """Return the cone's orientation R_AB (3, 3) at time ``t`` of steady rolling."""
    return _rz(omega * t) @ R0 @ _rz(-omega * t / math.sin(alpha))


def _rz(angle):
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def simulate(steps=400, alpha=math.radians(30.0), omega=1.0, m=1.0, h=0.2):
    """
    Return the circuit's results (a dict) of RK4 with ``steps`` steps.

    ``alpha`` the half-angle [rad], ``omega`` the axis's turning rate [rad/s], ``m`` [kg],
    ``h`` [m].
    """
    inertia = cone_inertia(m, h, alpha)
    c, s = math.cos(math.pi / 2 - alpha), math.sin(math.pi / 2 - alpha)
    R0 = np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])  # axis (cos a, 0, sin a)
    q0 = sv.rq(R0.T)
    nu0 = -omega / math.tan(alpha)
    period = 2.0 * math.pi / omega
    dt = period / steps
    x = np.r_[q0, nu0]
    worst = 0.0
    for k in range(steps):
        k1 = derivative(x, inertia)
        k2 = derivative(x + 0.5 * dt * k1, inertia)
        k3 = derivative(x + 0.5 * dt * k2, inertia)
        k4 = derivative(x + dt * k3, inertia)
        x = x + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
        R = sv.rq(x[:4]).T
        worst = max(worst, float(np.abs(R - closed_form((k + 1) * dt, omega, alpha, R0)).max()))
    return {
        'q0': q0,
        'q_end': x[:4],
        'sign_flip_error': float(np.abs(x[:4] + q0).max()),
        'closed_form_error': worst,
        'rolling_rate_drift': float(abs(x[4] - nu0)),
        'quaternion_norm_error': float(abs(np.linalg.norm(x[:4]) - 1.0)),
        'period': period,
    }


def main(argv=None):
    """Run one circuit and print what it shows."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--steps', type=int, default=400)
    parser.add_argument('--alpha-deg', type=float, default=30.0)
    args = parser.parse_args(argv)
    r = simulate(args.steps, math.radians(args.alpha_deg))
    print(f'one circuit ({r["period"]:.4f} s) in {args.steps} RK4 steps')
    print(f'  q(0) = {np.round(r["q0"], 6)}')
    print(f'  q(T) = {np.round(r["q_end"], 6)}   |q(T) + q(0)| = {r["sign_flip_error"]:.2e}')
    print(f'  largest distance from the closed form R(t): {r["closed_form_error"]:.2e}')
    print(f'  rolling rate drift: {r["rolling_rate_drift"]:.2e} rad/s')
    return 0


if __name__ == '__main__':
    sys.exit(main())
