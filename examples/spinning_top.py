#!/usr/bin/env python3
"""
The course's spinning top, in spatial_v2's terms (``spart_ros.spatial_v2``), two ways.

A symmetric top (a disk of mass ``m`` and radius ``r`` at height ``d`` above its pivot) spins
at ``w3`` about its axis, tilted by ``theta`` from the vertical, under gravity.  It is started
in steady precession: the axis then turns about the vertical at the rate Omega that solves

    Omega (I3 w3 - I1 Omega cos(theta)) = m g d     (I1 about the pivot; the slower root),

at constant tilt, so the closed form is the axis a(t) = [sin(Omega t) sin(theta),
-cos(Omega t) sin(theta), cos(theta)].

1. **Quaternions** (the course's exercise): the body on a spherical joint at the pivot, body
   coordinates at the pivot, v = [w; 0], spatial inertia I = mcI(m, [0, 0, d], Ic):
   S' I S w_dot = S' (I [0; E g] - crf(v) I v) with S = [1; 0], the orientation a quaternion
   integrated from ``rqd(q, w)``, E = ``rq(q)``.
2. **A spatial_v2 model** on the project's core: three revolute joints 'Rz', 'Rx', 'Rz' at the
   pivot (Euler angles phi, theta, psi; two massless bodies, the top the third), integrated
   with ``FDab`` (the articulated-body algorithm on the compiled fast path).

Both are integrated with RK4 for one precession period and compared with the closed form; then
the top is released without precession (it nutates, no closed form) and the two formulations
are compared with each other.

    python examples/spinning_top.py [--steps 800] [--tilt-deg 30] [--spin 30]
"""

import argparse
import math
import sys

import numpy as np
from spart_ros import spatial_v2 as sv

G = np.array([0.0, 0.0, -9.81])


def top_parameters(m=1.0, r=0.1, d=0.05):
    """
    Return (m, d, Ic (3, 3) about the CoM, I1 about the pivot, I3) of a disk top.

    ``m`` [kg], ``r`` the disk's radius, ``d`` its height above the pivot [m].
    """
    Ic = np.diag([m * r * r / 4.0, m * r * r / 4.0, m * r * r / 2.0])
    return m, d, Ic, Ic[0, 0] + m * d * d, Ic[2, 2]


def precession_rate(m, d, I1, I3, w3, theta, g=9.81):
    """Return the slow steady precession rate Omega [rad/s] (ValueError: too slow a spin)."""
    c = math.cos(theta)
    disc = (I3 * w3) ** 2 - 4.0 * I1 * c * m * g * d
    if disc < 0:
        raise ValueError(f'spin {w3} rad/s is too slow for steady precession at this tilt')
    return (I3 * w3 - math.sqrt(disc)) / (2.0 * I1 * c)


def axis_closed_form(t, omega, theta):
    """Return the top's axis (3,) at time ``t`` of steady precession."""
    return np.array(
        [
            math.sin(omega * t) * math.sin(theta),
            -math.cos(omega * t) * math.sin(theta),
            math.cos(theta),
        ]
    )


def _rk4(f, x, dt, steps, record):
    out = [record(x)]
    for _ in range(steps):
        k1 = f(x)
        k2 = f(x + 0.5 * dt * k1)
        k3 = f(x + 0.5 * dt * k2)
        k4 = f(x + dt * k3)
        x = x + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
        out.append(record(x))
    return x, np.array(out)


def simulate_quaternion(inertia, q0, w0, dt, steps):
    """Return the axis (steps + 1, 3) of the quaternion model (state [q; w_B]), and its end."""

    def f(x):
        q, w = x[:4], x[4:]
        E = sv.rq(q)
        v = np.r_[w, np.zeros(3)]
        rhs = inertia @ np.r_[np.zeros(3), E @ G] - sv.crf(v) @ inertia @ v
        return np.r_[sv.rqd(q, w), np.linalg.solve(inertia[:3, :3], rhs[:3])]

    x, axes = _rk4(f, np.r_[q0, w0], dt, steps, lambda x: sv.rq(x[:4])[2])
    return axes, x


def top_model(inertia):
    """Return the spatial_v2 Model of the top on three revolute joints Rz, Rx, Rz."""
    return sv.Model(
        NB=3,
        parent=[0, 1, 2],
        jtype=['Rz', 'Rx', 'Rz'],
        Xtree=[np.eye(6)] * 3,
        I=[np.zeros((6, 6)), np.zeros((6, 6)), inertia],
        gravity=G,
    )


def simulate_model(model, angles, rates, dt, steps):
    """Return the axis (steps + 1, 3) of the Euler-angle model integrated with FDab."""

    def f(x):
        return np.r_[x[3:], sv.FDab(model, x[:3], x[3:], np.zeros(3))]

    def axis(x):
        phi, theta = x[0], x[1]
        return np.array(
            [math.sin(phi) * math.sin(theta), -math.cos(phi) * math.sin(theta), math.cos(theta)]
        )

    x, axes = _rk4(f, np.r_[angles, rates], dt, steps, axis)
    return axes, x


def simulate(steps=800, theta=math.radians(30.0), w3=30.0):
    """
    Return one precession period's results (a dict), both ways, ``steps`` RK4 steps.

    ``theta`` the tilt [rad], ``w3`` the spin about the axis [rad/s].
    """
    m, d, Ic, I1, I3 = top_parameters()
    omega = precession_rate(m, d, I1, I3, w3, theta)
    inertia = sv.mcI(m, [0.0, 0.0, d], Ic)
    period = 2.0 * math.pi / omega
    dt = period / steps
    t = dt * np.arange(steps + 1)
    exact = np.array([axis_closed_form(s, omega, theta) for s in t])
    c, s = math.cos(theta), math.sin(theta)
    q0 = sv.rq(np.array([[1.0, 0.0, 0.0], [0.0, c, s], [0.0, -s, c]]))  # tilted about x
    w0 = np.array([0.0, omega * s, w3])  # body coordinates: precession + spin
    axes_q, end_q = simulate_quaternion(inertia, q0, w0, dt, steps)
    psi_rate = w3 - omega * c
    model = top_model(inertia)
    axes_m, end_m = simulate_model(model, [0.0, theta, 0.0], [omega, 0.0, psi_rate], dt, steps)
    # released without precession: the top nutates; the two formulations must still agree
    nut_q, _ = simulate_quaternion(inertia, q0, np.array([0.0, 0.0, w3]), dt, steps)
    nut_m, _ = simulate_model(model, [0.0, theta, 0.0], [0.0, 0.0, w3], dt, steps)
    return {
        'precession_rate': omega,
        'period': period,
        'quaternion_axis_error': float(np.abs(axes_q - exact).max()),
        'model_axis_error': float(np.abs(axes_m - exact).max()),
        'models_agree': float(np.abs(axes_q - axes_m).max()),
        'quaternion_return': float(np.abs(axes_q[-1] - axes_q[0]).max()),
        'tilt_drift': float(abs(end_m[1] - theta)),
        'spin_drift': float(abs(end_q[6] - w3)),
        'nutation_models_agree': float(np.abs(nut_q - nut_m).max()),
        'nutation_tilt_range': float(np.ptp(np.degrees(np.arccos(nut_m[:, 2])))),
    }


def main(argv=None):
    """Run one precession period both ways and print what it shows."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--steps', type=int, default=800)
    parser.add_argument('--tilt-deg', type=float, default=30.0)
    parser.add_argument('--spin', type=float, default=30.0, help='rad/s about the axis')
    args = parser.parse_args(argv)
    r = simulate(args.steps, math.radians(args.tilt_deg), args.spin)
    print(
        f'steady precession at {r["precession_rate"]:.6f} rad/s, one period '
        f'({r["period"]:.4f} s) in {args.steps} RK4 steps'
    )
    print(
        f'  quaternions: largest axis error {r["quaternion_axis_error"]:.2e}, spin drift '
        f'{r["spin_drift"]:.2e} rad/s'
    )
    print(
        f'  Euler-angle model (FDab): largest axis error {r["model_axis_error"]:.2e}, tilt '
        f'drift {r["tilt_drift"]:.2e} rad'
    )
    print(
        f'  released without precession: nutates over {r["nutation_tilt_range"]:.3f} deg, the '
        f'two agree to {r["nutation_models_agree"]:.2e}'
    )
    return 0


if __name__ == '__main__':
    sys.exit(main())
