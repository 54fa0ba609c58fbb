"""
spart_ros.core.orbit: the orbit, its frames and loads against independent checks (no plant or ROS).

- the Clohessy-Wiltshire closed form against scipy's integration of the CW equations;
- the tidal accelerations: 'nonlinear' against the point-mass difference in extended precision
  (mpmath), 'linear' its first-order part (the difference shrinks as (r / a)^2);
- the gravity-gradient torque against 3 n^2 (c x I c) in body axes (and 3 mu / d^3 (u x I u));
- LVLH <-> N conversions: inverses, and the twist relative to LVLH the rate of the LVLH pose;
- Hill <-> CCSDS axes; bad inputs name the problem.
"""

import math

import mpmath
import numpy as np
import pytest
from scipy.integrate import solve_ivp
from spart_ros.core.errors import InputError
from spart_ros.core.orbit import (
    CircularOrbit,
    clohessy_wiltshire,
    EARTH_MU,
    HILL_FROM_CCSDS,
    jacobi_integral,
)

ORBIT = CircularOrbit.make(altitude=500e3)
N = ORBIT.mean_motion


def rotation(axis, angle):
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + math.sin(angle) * K + (1 - math.cos(angle)) * K @ K


def test_the_orbit_from_altitude_or_mean_motion():
    a = 6378137.0 + 500e3
    assert ORBIT.radius == pytest.approx(a, rel=1e-14)
    assert ORBIT.mean_motion == pytest.approx(math.sqrt(EARTH_MU / a**3), rel=1e-15)
    assert ORBIT.period == pytest.approx(2 * math.pi * math.sqrt(a**3 / EARTH_MU), rel=1e-14)
    assert ORBIT.speed == pytest.approx(math.sqrt(EARTH_MU / a), rel=1e-14)
    same = CircularOrbit.make(mean_motion=ORBIT.mean_motion)
    assert same.altitude == pytest.approx(500e3, rel=1e-9)
    assert 'mean motion' in ORBIT.describe() and 'x radial' in ORBIT.describe()


@pytest.mark.parametrize(
    'kwargs, match',
    [
        ({}, 'neither'),
        ({'altitude': 4e5, 'mean_motion': 1e-3}, 'both'),
        ({'altitude': -1.0}, 'altitude: expected a positive'),
        ({'mean_motion': 0.0}, 'mean_motion: expected a positive'),
        ({'altitude': 4e5, 'mu': float('nan')}, 'mu'),
        ({'altitude': 4e5, 'model': 'keplerian'}, 'model'),
        ({'altitude': 4e5, 'body_radius': -1.0}, 'body_radius'),
    ],
)
def test_bad_orbits_name_the_problem(kwargs, match):
    with pytest.raises(InputError, match=match):
        CircularOrbit.make(**kwargs)


def test_clohessy_wiltshire_closed_form_solves_the_cw_equations():
    n = N

    def cw(_t, x):
        return [x[3], x[4], x[5], 3 * n * n * x[0] + 2 * n * x[4], -2 * n * x[3], -n * n * x[2]]

    x0 = [12.0, -5.0, 3.0, 0.01, -0.02, 0.004]
    t = np.linspace(0.0, 1.5 * ORBIT.period, 40)
    ode = solve_ivp(cw, (0, t[-1]), x0, t_eval=t, rtol=1e-12, atol=1e-12, method='DOP853')
    r, v = clohessy_wiltshire(n, x0[:3], x0[3:], t)
    assert np.max(np.abs(r - ode.y[:3].T)) < 1e-8 * np.max(np.abs(r))
    assert np.max(np.abs(v - ode.y[3:].T)) < 1e-8 * np.max(np.abs(v))
    J = jacobi_integral(n, r, v)
    assert np.max(np.abs(J - J[0])) < 1e-12 * np.max(np.abs(v)) ** 2


def test_nonlinear_tidal_acceleration_is_the_point_mass_difference():
    """Against -mu d / |d|^3 + mu e / a^2 in 50-digit arithmetic (the float difference cancels)."""
    orbit = CircularOrbit.make(altitude=500e3, model='nonlinear')
    rng = np.random.default_rng(1)
    r = rng.normal(size=(6, 3)) * np.array([[1.0], [10.0], [100.0], [1e3], [1e4], [1e5]])
    t = 1234.5
    got = orbit.accelerations(t, r)
    mpmath.mp.dps = 50
    mu, a = mpmath.mpf(orbit.mu), mpmath.mpf(orbit.radius)
    # the angle n t as the float code has it; cos/sin of it in 50 digits
    e = [mpmath.cos(mpmath.mpf(N * 0) + mpmath.mpf(orbit.mean_motion * t)), None, 0]
    e[1] = mpmath.sin(mpmath.mpf(orbit.mean_motion * t))
    for k in range(len(r)):
        d = [a * e[i] + mpmath.mpf(r[k, i]) for i in range(3)]
        dist = mpmath.sqrt(sum(x * x for x in d))
        ref = [float(-mu * d[i] / dist**3 + mu * e[i] / a**2) for i in range(3)]
        assert np.max(np.abs(got[k] - ref)) <= 1e-12 * np.max(np.abs(ref)), k


def test_the_linear_field_is_the_first_order_of_the_nonlinear_one():
    nonlinear = CircularOrbit(ORBIT.mean_motion, model='nonlinear')
    errs = []
    for size in (1.0, 10.0, 100.0, 1000.0):
        r = size * np.array([[0.6, -0.48, 0.64]])
        lin, non = ORBIT.accelerations(0.3, r), nonlinear.accelerations(0.3, r)
        errs.append(np.linalg.norm(lin - non) / np.linalg.norm(lin))
    ratios = np.array(errs[1:]) / np.array(errs[:-1])
    assert np.all(np.abs(ratios - 10.0) < 0.1), errs  # error / |a| grows as r / a
    assert errs[0] < 3 / ORBIT.radius


def test_gravity_gradient_torque_is_3n2_c_x_Ic_in_body_axes():
    rng = np.random.default_rng(2)
    I = np.array([[10.0, 0.4, -0.3], [0.4, 14.0, 0.2], [-0.3, 0.2, 12.0]])  # noqa: E741
    for _ in range(5):
        t = rng.uniform(0, 5000)
        R = rotation(rng.normal(size=3), rng.uniform(0, np.pi))  # body -> N
        com = rng.normal(size=3)
        f, tau = ORBIT.loads(t, [3.0], [com], [R], [I])
        C = ORBIT.lvlh_rotation(t)
        c = R.T @ C @ np.array([-1.0, 0.0, 0.0])  # nadir in body axes
        expected = R @ (3 * N**2 * np.cross(c, I @ c))
        assert np.max(np.abs(tau[0] - expected)) < 1e-12 * 3 * N**2 * 14
        # principal moments in a principal frame: the same torque
        w, V = np.linalg.eigh(I)
        _, tau_p = ORBIT.loads(t, [3.0], [com], [R @ V], [w])
        assert np.max(np.abs(tau_p - tau)) < 1e-12 * 3 * N**2 * 14
        # the force: m n^2 (3 e e' - 1) r, in LVLH axes m n^2 (2 x, -y, -z) (with the centrifugal
        # n^2 (x, y, 0) of the rotating frame: CW's 3 n^2 x and -n^2 z)
        r_l = C.T @ com
        expected_f = 3.0 * N**2 * np.array([2 * r_l[0], -r_l[1], -r_l[2]])
        assert np.allclose(C.T @ f[0], expected_f, rtol=1e-12, atol=0)
        nonlinear = CircularOrbit(N, model='nonlinear')
        _, tau_n = nonlinear.loads(t, [3.0], [com], [R], [I])
        assert np.max(np.abs(tau_n - tau)) < 1e-5 * np.max(np.abs(tau)) + 1e-20


def test_lvlh_conversions_are_inverse_and_give_the_rates_of_the_lvlh_pose():
    rng = np.random.default_rng(3)
    t = 777.0
    R = rotation(rng.normal(size=3), 1.1)
    p, v, w = rng.normal(size=3), rng.normal(size=3) * 0.01, rng.normal(size=3) * 0.01
    back = ORBIT.to_lvlh(t, *ORBIT.from_lvlh(t, R, p, v, w))
    for x, y in zip(back, (R, p, v, w)):
        assert np.allclose(x, y, rtol=0, atol=1e-15)
    # a body moving uniformly in N: its LVLH pose's rates (central differences) are the twist
    R_n, p_n, v_n, w_n = ORBIT.from_lvlh(t, R, p, v, w)  # v_n, w_n in b, relative to N

    def lvlh_pose(s):
        R_s = rotation(R_n @ w_n, np.linalg.norm(w_n) * s) @ R_n
        return ORBIT.to_lvlh(t + s, R_s, p_n + R_n @ v_n * s, v_n, w_n)[:2]

    h = 1e-3
    (Ra, pa), (Rb, pb) = lvlh_pose(-h), lvlh_pose(h)
    v_fd = R.T @ (pb - pa) / (2 * h)
    W = R.T @ (Rb - Ra) / (2 * h)
    w_fd = np.array([W[2, 1] - W[1, 2], W[0, 2] - W[2, 0], W[1, 0] - W[0, 1]]) / 2
    assert np.allclose(v_fd, v, atol=1e-9) and np.allclose(w_fd, w, atol=1e-9)


def test_hill_and_ccsds_axes():
    H = HILL_FROM_CCSDS
    assert np.allclose(H.T @ H, np.eye(3)) and np.linalg.det(H) == pytest.approx(1.0)
    assert np.array_equal(H @ [1, 0, 0], [0, 1, 0])  # CCSDS x: along-track
    assert np.array_equal(H @ [0, 1, 0], [0, 0, -1])  # CCSDS y: minus the orbit normal
    assert np.array_equal(H @ [0, 0, 1], [-1, 0, 0])  # CCSDS z: nadir
