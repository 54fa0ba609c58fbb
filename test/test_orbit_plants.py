"""
The MuJoCo and RK4 plants on an orbit (no ROS): closed forms, invariants; no orbit: as before.

- orbit off: the plants' runs equal those of the code before the option to rounding
  (orbit_off_reference.py; the stored runs come from another CPU: not bit for bit);
- a point mass (a single small body) without thrust follows the Clohessy-Wiltshire closed form
  (written out here, not the package's) to 1e-6 of its motion over one orbit, for a drift, a 2:1
  relative ellipse and an out-of-plane oscillation, and keeps its Jacobi integral (the energy in
  the rotating frame) to 1e-9 of its kinetic and potential terms;
- a rigid body's gravity-gradient torque, from its angular acceleration, equals
  3 n^2 (c x I c) (c the nadir in body axes) to 1e-9 at random attitudes;
- a small pitch libration (about the orbit normal, LVLH z; the body's least inertia radial) has
  the period 2 pi / (n sqrt(3 (Iy - Ix) / Iz)) to 1e-4.

Time steps of 5 s (CW) or 10 s (n dt = 0.011): RK4's phase error over an orbit is ~1e-8 at 10 s;
each run takes 556 to 1111 steps.
"""

import math
import os
import sys
import warnings

import numpy as np
import pytest
from spart_ros.core.attitude import quaternion_to_ros
from spart_ros.core.errors import InputError
from spart_ros.core.orbit import CircularOrbit
from spart_ros.core.urdf import robot_from_urdf
from spart_ros.sim.plant import InitialState, MujocoPlant
from spart_ros.sim.rigid_body import RigidBodyPlant

HERE = os.path.dirname(os.path.abspath(__file__))
ORBIT = CircularOrbit.make(altitude=400e3)
N = ORBIT.mean_motion
DT = 10.0
#: the CW runs' step: the drift's along-track excursion (190 m against a 20 m radial offset) makes
#: its Jacobi integral's error 4e-9 at 10 s
DT_CW = 5.0
PLANTS = ('mujoco', 'rk4')


def body_urdf(mass, inertia):
    """One free body (the base link, CoM at its origin) with a full inertia matrix (3, 3)."""
    I = np.asarray(inertia, dtype=float).tolist()  # noqa: E741
    mass = float(mass)
    return (
        '<robot name="body"><link name="body"><inertial><origin xyz="0 0 0"/>'
        f'<mass value="{mass!r}"/><inertia ixx="{I[0][0]!r}" iyy="{I[1][1]!r}" izz="{I[2][2]!r}" '
        f'ixy="{I[0][1]!r}" ixz="{I[0][2]!r}" iyz="{I[1][2]!r}"/></inertial></link></robot>'
    )


def make_plant(kind, urdf, initial, orbit=ORBIT, dt=DT):
    if kind == 'mujoco':
        return MujocoPlant.from_urdf(
            urdf, base='floating', gravity=(0, 0, 0), dt=dt, orbit=orbit, initial=initial
        )
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        robot, _ = robot_from_urdf(urdf)
    return RigidBodyPlant(
        robot, base='floating', gravity=(0, 0, 0), dt=dt, orbit=orbit, initial=initial
    )


def rotation(axis, angle):
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + math.sin(angle) * K + (1 - math.cos(angle)) * K @ K


# -- orbit off: unchanged ---------------------------------------------------------------------


#: How far a run may differ from the stored one, relative to the largest value of each readout
#: (max(1, max |ref|)).  The stored runs were made on another CPU: the last bits of libm, BLAS
#: and SIMD reductions differ between CPUs (seen: 3.5e-18 on MuJoCo, 5.6e-17 on RK4).  Rounding
#: of 1e-16 in the start state grows to 3e-15 (MuJoCo) and 6e-15 (RK4) over the 100 steps
#: (measured by perturbing it), so 1e-12 leaves a factor 150 for rounding; any physics a change
#: could add is far above it (an orbit's tidal force alone moves the base by 2e-9 m in 0.1 s).
ORBIT_OFF_TOLERANCE = 1e-12


def orbit_off_differences(run, reference):
    """Return {readout: its largest difference from ``reference``, relative to its size}."""
    out = {}
    for name, values in run.items():
        ref = reference[name]
        assert values.shape == ref.shape, name
        out[name] = float(np.max(np.abs(values - ref)) / max(1.0, np.max(np.abs(ref))))
    return out


@pytest.mark.parametrize('kind', PLANTS)
def test_without_an_orbit_the_plants_run_as_before(kind):
    """
    Orbit off: the runs of the code before the option, to rounding (ORBIT_OFF_TOLERANCE).

    The same runs with an orbit differ by far more: the tolerance would see a change.
    """
    sys.path.insert(0, HERE)
    import orbit_off_reference

    reference = np.load(os.path.join(HERE, 'data', 'orbit_off_reference.npz'))
    off = orbit_off_differences(orbit_off_reference.run(kind), reference)
    assert max(off.values()) <= ORBIT_OFF_TOLERANCE, (
        f'differs from the run before the orbit option by more than rounding explains: {off}'
    )
    on = orbit_off_differences(orbit_off_reference.run(kind, orbit=ORBIT), reference)
    assert min(on[f'{kind}_{k}'] for k in ('p', 'q', 'odom')) > 1e3 * ORBIT_OFF_TOLERANCE, on


# -- point mass: Clohessy-Wiltshire -----------------------------------------------------------


def cw_closed_form(n, r0, v0, t):
    """Return the CW solution in Hill's frame (x radial, y along-track, z normal), written out."""
    x0, y0, z0 = r0
    a, b, c = v0
    C, S, nt = np.cos(n * t), np.sin(n * t), n * t
    x = 4 * x0 - 3 * x0 * C + a / n * S + 2 * b / n * (1 - C)
    y = y0 + 6 * x0 * (S - nt) - 2 * a / n * (1 - C) + b / n * (4 * S - 3 * nt)
    z = z0 * C + c / n * S
    return np.stack([x, y, z], axis=1)


#: (position, velocity relative to LVLH) at t = 0
MOTIONS = {
    # a radial offset with the along-track rate of a lower/higher circular orbit: drifts along y
    'drift': ((20.0, 5.0, 0.0), (0.0, -1.5 * N * 20.0, 0.0)),
    # y' = -2 n x: the 2:1 relative ellipse, centred on the reference point, period 2 pi / n
    'ellipse': ((10.0, 0.0, 0.0), (0.0, -2.0 * N * 10.0, 0.0)),
    # out of plane: z oscillates at n, decoupled
    'out_of_plane': ((0.0, 0.0, 10.0), (0.0, 0.0, 0.004)),
}


@pytest.mark.parametrize('motion', sorted(MOTIONS))
@pytest.mark.parametrize('kind', PLANTS)
def test_a_point_mass_follows_clohessy_wiltshire_and_keeps_its_jacobi_integral(kind, motion):
    r0, v0 = (np.array(v) for v in MOTIONS[motion])
    # 1 kg with a tiny inertia: its rotation does not move its CoM
    urdf = body_urdf(1.0, 1e-6 * np.eye(3))
    initial = InitialState(base_position=tuple(r0), base_linear_velocity=tuple(v0))
    plant = make_plant(kind, urdf, initial, dt=DT_CW)
    steps = int(round(ORBIT.period / DT_CW))
    t, r, v = [], [], []
    for k in range(steps + 1):
        R, p, v_b, _ = plant.base_link_state()  # in LVLH, twist relative to it, in b
        t.append(plant.time)
        r.append(p)
        v.append(R @ v_b)
        if k < steps:
            plant.step(1)
    t, r, v = np.array(t), np.array(r), np.array(v)
    assert t[0] == 0.0 and abs(t[-1] - ORBIT.period) < DT_CW
    cw = cw_closed_form(N, r0, v0, t)
    scale = np.max(np.abs(cw))  # the size of the motion
    err = np.max(np.abs(r - cw)) / scale
    assert err < 1e-6, f'{kind} {motion}: {err:.3g} of the motion'  # ~3e-8 seen
    # the Jacobi integral and the size of its terms
    jacobi = 0.5 * (np.sum(v * v, 1) - 3 * N**2 * r[:, 0] ** 2 + N**2 * r[:, 2] ** 2)
    terms = np.max(0.5 * (np.sum(v * v, 1) + 3 * N**2 * r[:, 0] ** 2 + N**2 * r[:, 2] ** 2))
    drift = np.max(np.abs(jacobi - jacobi[0])) / terms
    assert drift < 1e-9, f'{kind} {motion}: Jacobi integral changed by {drift:.3g}'  # ~4e-10


# -- rigid body: gravity-gradient torque and libration ----------------------------------------


INERTIA = np.array([[10.0, 0.4, -0.3], [0.4, 14.0, 0.2], [-0.3, 0.2, 12.0]])


@pytest.mark.parametrize('kind', PLANTS)
def test_the_gravity_gradient_torque_on_a_rigid_body_is_3n2_c_x_Ic(kind):
    """
    Torque from the plant's own accelerations: I alpha + w x I w at the start of a run.

    The body sits at the reference point (no tidal force on its CoM) at a random attitude and
    angular velocity; c is the nadir (-LVLH x) in body axes.
    """
    rng = np.random.default_rng(7)
    urdf = body_urdf(50.0, INERTIA)
    scale = 3 * N**2 * np.linalg.norm(INERTIA, 2)
    for _ in range(8):
        R = rotation(rng.normal(size=3), rng.uniform(0, np.pi))  # body -> LVLH
        w_rel = 1e-3 * rng.normal(size=3)  # relative to LVLH, in b
        initial = InitialState(
            base_orientation=tuple(quaternion_to_ros(R)), base_angular_velocity=tuple(w_rel)
        )
        plant = make_plant(kind, urdf, initial)
        a_b, alpha_b = plant.base_acceleration()
        w = w_rel + R.T @ np.array([0.0, 0.0, N])  # inertial angular velocity, in b
        torque = INERTIA @ alpha_b + np.cross(w, INERTIA @ w)
        c = R.T @ np.array([-1.0, 0.0, 0.0])
        expected = 3 * N**2 * np.cross(c, INERTIA @ c)
        err = np.max(np.abs(torque - expected)) / scale
        assert err < 1e-9, f'{kind}: torque {torque} expected {expected} ({err:.3g})'
        assert np.max(np.abs(a_b)) < 1e-15  # no force on a CoM at the reference point


def crossings(t, x):
    """Return the times x goes up through zero (linear interpolation)."""
    k = np.flatnonzero((x[:-1] < 0) & (x[1:] >= 0))
    return t[k] - x[k] * (t[k + 1] - t[k]) / (x[k + 1] - x[k])


@pytest.mark.parametrize('kind', PLANTS)
def test_a_small_pitch_libration_has_the_gravity_gradient_period(kind):
    """
    Pitch about the orbit normal (LVLH z), principal axes x radial, y along-track, Iy > Ix.

    Linearized: Iz theta'' = -3 n^2 (Iy - Ix) theta, period 2 pi / (n sqrt(3 (Iy - Ix) / Iz)).
    """
    Ix, Iy, Iz = 10.0, 20.0, 15.0
    urdf = body_urdf(50.0, np.diag([Ix, Iy, Iz]))
    theta0 = 1e-3  # rad: the period's amplitude correction is theta0^2 / 16
    initial = InitialState(base_orientation=tuple(quaternion_to_ros(rotation([0, 0, 1], theta0))))
    plant = make_plant(kind, urdf, initial)
    expected = 2 * np.pi / (N * math.sqrt(3 * (Iy - Ix) / Iz))
    steps = int(2.6 * expected / DT)
    t, theta = [], []
    for _ in range(steps):
        R = plant.base_link_state()[0]
        t.append(plant.time)
        theta.append(math.atan2(R[1, 0], R[0, 0]))
        plant.step(1)
    t, theta = np.array(t), np.array(theta)
    up = crossings(t, theta)
    assert len(up) >= 2
    period = np.mean(np.diff(up))
    assert abs(period / expected - 1) < 1e-4, f'{kind}: period {period} s, expected {expected} s'
    assert np.max(np.abs(theta)) < 1.01 * theta0  # a libration, not a tumble


# -- frames and errors ------------------------------------------------------------------------


@pytest.mark.parametrize('kind', PLANTS)
def test_a_body_at_rest_in_lvlh_at_the_reference_point_stays_there(kind):
    """
    Aligned with LVLH (principal axes), it turns with LVLH: zero relative twist throughout.

    Over 1000 s (100 steps; RK4's error on the turn at n: ~(n dt)^5 / 120 per step).
    """
    plant = make_plant(kind, body_urdf(50.0, np.diag([10.0, 20.0, 15.0])), InitialState())
    plant.step(100)
    R, p, v, w = plant.base_link_state()
    assert np.max(np.abs(R - np.eye(3))) < 1e-9  # 5e-11 seen
    assert np.max(np.abs(w)) < 1e-12
    assert np.max(np.abs(p)) < 1e-12 and np.max(np.abs(v)) < 1e-12
    o = plant.odometry()
    assert np.allclose(o.orientation, [0, 0, 0, 1], atol=1e-9)


@pytest.mark.parametrize('kind', PLANTS)
def test_the_odometry_twist_is_the_rate_of_the_lvlh_pose(kind):
    """Finite differences of the LVLH pose over 0.1 s steps against the odometry twist."""
    rng = np.random.default_rng(3)
    R0 = rotation(rng.normal(size=3), 0.7)
    initial = InitialState(
        base_position=(3.0, -2.0, 1.0),
        base_orientation=tuple(quaternion_to_ros(R0)),
        base_linear_velocity=(0.01, 0.02, -0.01),
        base_angular_velocity=(0.01, -0.02, 0.03),
    )
    plant = make_plant(kind, body_urdf(50.0, INERTIA), initial, dt=0.05)
    R_a, p_a, v_a, w_a = plant.base_link_state()
    assert np.allclose(p_a, [3.0, -2.0, 1.0], atol=1e-12)
    assert np.allclose(v_a, [0.01, 0.02, -0.01], atol=1e-12)
    assert np.allclose(w_a, [0.01, -0.02, 0.03], atol=1e-12)
    plant.step(1)
    _, _, v_m, w_m = plant.base_link_state()
    R_m = plant.base_rotation()
    plant.step(1)
    R_b, p_b, _, _ = plant.base_link_state()
    h = 2 * plant.dt
    v_fd = R_m.T @ (p_b - p_a) / h
    W = R_m.T @ (R_b - R_a) / h  # skew(w) in b
    w_fd = np.array([W[2, 1] - W[1, 2], W[0, 2] - W[2, 0], W[1, 0] - W[0, 1]]) / 2
    assert np.max(np.abs(v_fd - v_m)) < 1e-6 and np.max(np.abs(w_fd - w_m)) < 1e-6


def test_an_orbit_needs_a_floating_base_and_no_uniform_gravity():
    urdf = body_urdf(1.0, np.eye(3))
    with pytest.raises(InputError, match='floating base'):
        MujocoPlant.from_urdf(urdf, base='fixed', gravity=(0, 0, 0), orbit=ORBIT)
    with pytest.raises(InputError, match='gravity must be zero'):
        MujocoPlant.from_urdf(urdf, base='floating', orbit=ORBIT)  # default gravity -9.81
    with pytest.raises(InputError, match='CircularOrbit'):
        MujocoPlant.from_urdf(urdf, base='floating', gravity=(0, 0, 0), orbit=400e3)
    plant = MujocoPlant.from_urdf(urdf, base='floating', gravity=(0, 0, 0), orbit=ORBIT)
    with pytest.raises(InputError, match='gravity must be zero'):
        plant.gravity = (0, 0, -1)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        robot, _ = robot_from_urdf(urdf)
    with pytest.raises(InputError, match='floating base'):
        RigidBodyPlant(robot, base='fixed', gravity=(0, 0, 0), orbit=ORBIT)
    with pytest.raises(InputError, match='gravity must be zero'):
        RigidBodyPlant(robot, base='floating', orbit=ORBIT)


def test_the_imu_of_a_free_body_in_orbit_reads_no_specific_force():
    """Away from the reference point the body accelerates (tidal), but it falls freely."""
    initial = InitialState(base_position=(30.0, -10.0, 5.0), base_angular_velocity=(0, 0, 0.01))
    plant = make_plant('mujoco', body_urdf(50.0, INERTIA), initial, dt=0.1)
    plant.step(5)
    a_b, _ = plant.base_acceleration()
    imu = plant.imu()
    assert np.linalg.norm(a_b) > 1e-5  # n^2 x 30 m ~ 4e-5 m/s^2
    assert np.max(np.abs(imu.linear_acceleration)) < 1e-15
    assert np.allclose(imu.orientation, plant.odometry().orientation, atol=1e-15)
    R = plant.base_rotation()
    w_inertial = plant.odometry().angular + R.T @ [0, 0, N]
    assert np.allclose(imu.angular_velocity, w_inertial, atol=1e-15)
