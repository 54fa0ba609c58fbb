"""
spart_ros.core.target and free_body: a target's declaration, dynamics and predicted motion.

Independent checks (no plant, no ROS):

- the motion against scipy's DOP853 on Euler's equations written here with the rotation matrix
  as state (not the quaternion the module integrates), to 1e-9: torque-free, and in orbit with
  the loads of ``CircularOrbit.loads`` (linear and nonlinear), the convention the plants follow;
- energy and angular momentum conserved without an orbit; the CoM on the Clohessy-Wiltshire
  closed form in orbit; the gravity-gradient torque changes the motion (the check can fail);
- the fixture's twist and acceleration against finite differences of its pose (world and LVLH);
- declarations: YAML (mapping, file, with a URDF), URDF (composite mass, CoM, inertia by the
  parallel-axis theorem written out); bad declarations name the problem.
"""

import math

import numpy as np
import pytest
from spart_ros.core.errors import InputError
from spart_ros.core.free_body import FixturePrediction, FreeBody
from spart_ros.core.orbit import CircularOrbit, clohessy_wiltshire
from spart_ros.core.rigid_motion import rotation_from_vector, rotation_vector
from spart_ros.core.target import (
    load_target,
    quaternion_from_rotation,
    rotation_from_quaternion,
    Target,
    TargetState,
)

DEG = math.pi / 180.0
ORBIT = CircularOrbit.make(altitude=450e3)


def _fixture():
    T = np.eye(4)
    T[:3, :3] = rotation_from_vector([0.2, -0.4, 0.3])
    T[:3, 3] = [0.7, 0.1, -0.2]
    return T


# a non-principal inertia (l's axes are not its principal axes) and a CoM off l's origin
INERTIA = np.array([[40.0, 3.0, -2.0], [3.0, 55.0, 1.5], [-2.0, 1.5, 30.0]])
TARGET = Target.make('client', 250.0, INERTIA, com=[0.05, -0.02, 0.1], fixture=_fixture())


def _tumbling(rate_deg=10.0, seed=3, r=(1.5, 0.2, -0.3), v=(0.01, -0.02, 0.005)):
    rng = np.random.default_rng(seed)
    axis = rng.standard_normal(3)
    w = rate_deg * DEG * axis / np.linalg.norm(axis)
    R = rotation_from_vector(rng.standard_normal(3))
    return TargetState(R, np.array(r, float), np.array(v, float), w)


def _reference(state, times, orbit=None):
    """Return SciPy's DOP853 on [r, v, R (9), w]: Euler's equations, loads from orbit.loads."""
    from scipy.integrate import solve_ivp  # here: every xdist worker imports every test file

    inv = np.linalg.inv(INERTIA)
    m = TARGET.mass

    def f(t, y):
        r, v, R, w = y[0:3], y[3:6], y[6:15].reshape(3, 3), y[15:18]
        a, tau_b = np.zeros(3), np.zeros(3)
        if orbit is not None:
            F, tau = orbit.loads(t, [m], [r], [R], [INERTIA])
            a, tau_b = F[0] / m, R.T @ tau[0]
        W = np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])
        wd = inv @ (tau_b - np.cross(w, INERTIA @ w))
        return np.concatenate([v, a, (R @ W).ravel(), wd])

    y0 = np.concatenate([state.r, state.v, np.asarray(state.R).ravel(), state.w])
    sol = solve_ivp(f, (0.0, times[-1]), y0, method='DOP853', t_eval=times, rtol=1e-13, atol=1e-15)
    assert sol.success
    return [TargetState(y[6:15].reshape(3, 3), y[0:3], y[3:6], y[15:18]) for y in sol.y.T]


def _assert_close(got, want, scale_r=1.0, scale_w=10 * DEG, tol=1e-9):
    for a, b in zip(got, want):
        assert np.abs(a.R - b.R).max() < tol
        assert np.abs(a.r - b.r).max() < tol * scale_r
        assert np.abs(a.v - b.v).max() < tol * scale_r
        assert np.abs(a.w - b.w).max() < tol * scale_w


@pytest.mark.parametrize('rate', [2.0, 10.0, 30.0])
def test_torque_free_motion_matches_an_independent_integration(rate):
    state = _tumbling(rate)
    times = np.linspace(2.0, 20.0, 10)
    got = FreeBody(TARGET).propagate(state, 0.0, times)
    want = _reference(state, times)
    _assert_close(got, want, scale_w=rate * DEG)
    # conserved: kinetic energy and angular momentum (about the origin)
    e0, h0 = TARGET.kinetic_energy(state), TARGET.momentum(state)
    for s in got:
        assert TARGET.kinetic_energy(s) == pytest.approx(e0, rel=1e-10)
        assert np.abs(TARGET.momentum(s) - h0).max() < 1e-10 * np.abs(h0).max()
    # and it is a tumble (the body axes' rate changes: not a steady spin)
    assert np.abs(got[-1].w - state.w).max() > 1e-2 * rate * DEG


@pytest.mark.parametrize('model', ['linear', 'nonlinear'])
def test_in_orbit_the_gravity_gradient_and_tidal_loads_of_the_orbit_module(model):
    orbit = CircularOrbit.make(altitude=450e3, model=model)
    state = _tumbling(5.0, seed=7, r=(30.0, -20.0, 5.0), v=(0.02, 0.01, -0.01))
    times = np.linspace(10.0, 60.0, 6)
    got = FreeBody(TARGET, orbit).propagate(state, 0.0, times)
    _assert_close(got, _reference(state, times, orbit), scale_r=30.0, scale_w=5 * DEG)
    free = FreeBody(TARGET).propagate(state, 0.0, times)
    # both loads matter at this tolerance (so the comparison above could fail)
    assert np.abs(free[-1].w - got[-1].w).max() > 1e3 * 1e-9 * 5 * DEG
    assert np.abs(free[-1].r - got[-1].r).max() > 1e3 * 1e-9 * 30.0
    force, torque = FreeBody(TARGET, orbit).loads(1.0, state)
    a, _ = FreeBody(TARGET, orbit).accelerations(1.0, state)
    assert np.allclose(force / TARGET.mass, a, rtol=1e-12, atol=0)
    assert np.linalg.norm(torque) > 0


def test_in_orbit_the_com_follows_clohessy_wiltshire():
    """A slow body over a third of an orbit: its CoM, read in LVLH, on the CW closed form."""
    body = FreeBody(TARGET, ORBIT, max_step=2.0, max_angle=0.01)
    R = rotation_from_vector([0.1, 0.2, 0.3])
    r_l, v_l = np.array([20.0, -50.0, 10.0]), np.array([0.01, -0.03, 0.02])
    w_l = np.array([0.002, -0.001, 0.003])
    R_n, r_n, v_b, w_n = ORBIT.from_lvlh(0.0, R, r_l, R.T @ v_l, w_l)
    start = TargetState(R_n, r_n, R_n @ v_b, w_n)
    times = np.linspace(200.0, ORBIT.period / 3, 5)
    r_cw, v_cw = clohessy_wiltshire(ORBIT.mean_motion, r_l, v_l, times)
    for t, s, rc, vc in zip(times, body.propagate(start, 0.0, times), r_cw, v_cw):
        R_l, p_l, vb_l, _ = ORBIT.to_lvlh(t, s.R, s.r, s.R.T @ s.v, s.w)
        assert np.abs(p_l - rc).max() < 1e-9 * np.abs(r_cw).max()
        assert np.abs(R_l @ vb_l - vc).max() < 1e-9 * np.abs(r_cw).max() * ORBIT.mean_motion


def _finite_difference(pred, t, h=1e-4):
    """Central differences of the fixture's pose and twist at t (world axes)."""
    a, b = pred.motion(t - h), pred.motion(t + h)
    w = rotation_vector(b.R @ a.R.T) / (2 * h)
    v = (b.p - a.p) / (2 * h)
    acc = (b.twist - a.twist) / (2 * h)
    return np.concatenate([w, v]), acc


@pytest.mark.parametrize('frame', ['world', 'lvlh'])
def test_the_fixture_twist_and_acceleration_are_the_rates_of_its_pose(frame):
    orbit = ORBIT if frame == 'lvlh' else None
    body = FreeBody(TARGET, orbit)
    # a fast orbit: the LVLH terms (W x v, W x W x p) are visible at the tolerance
    if frame == 'lvlh':
        body = FreeBody(TARGET, CircularOrbit.make(mean_motion=0.02))
    estimate = _tumbling(20.0, seed=11, r=(3.0, -1.0, 0.5), v=(0.05, 0.02, -0.03))
    pred = FixturePrediction(body, estimate, 1.0, frame)
    for t in (1.5, 4.0):
        m = pred.motion(t)
        twist, acc = _finite_difference(pred, t)
        assert np.abs(m.twist - twist).max() < 1e-7
        assert np.abs(m.acceleration - acc).max() < 1e-7
    # the estimate is where the prediction starts (LVLH in, LVLH out)
    s = pred.target_state(1.0)
    assert np.abs(s.R - estimate.R).max() < 1e-12 and np.abs(s.r - estimate.r).max() < 1e-12
    assert np.abs(s.v - estimate.v).max() < 1e-12 and np.abs(s.w - estimate.w).max() < 1e-12
    # a little before the estimate: integrated back (and forward again to the estimate)
    back = pred.state(0.8)
    again = FixturePrediction(body, back, 0.8, 'world').state(1.0)
    start = pred.state(1.0)
    assert np.abs(again.R - start.R).max() < 1e-12 and np.abs(again.w - start.w).max() < 1e-12
    with pytest.raises(InputError, match='before the estimate'):
        pred.motion(0.4)


def test_the_prediction_steps_forward_as_propagate_does():
    body = FreeBody(TARGET)
    estimate = _tumbling(10.0)
    pred = FixturePrediction(body, estimate, 2.0)
    times = 2.0 + np.linspace(0.0, 3.0, 3001)  # a 1 kHz loop asking for each tick
    states = [pred.state(t) for t in times]
    want = body.propagate(estimate, 2.0, times[::500])
    _assert_close(states[::500], want, tol=1e-12)
    # an earlier time again: from the kept states, the same motion
    again = pred.state(times[1200])
    assert np.abs(again.R - states[1200].R).max() < 1e-12


def test_odometry_round_trip_and_the_initial_state():
    s = _tumbling(8.0)
    R_l, p_l, v_l, w_l = TARGET.odometry(s)
    back = TARGET.state_from_odometry(R_l, p_l, v_l, w_l)
    for a, b in zip(s, back):
        assert np.allclose(a, b, rtol=0, atol=1e-14)
    # the link origin's velocity: the CoM's minus w x (R com)
    assert np.allclose(R_l @ v_l, s.v - np.cross(s.R @ s.w, s.R @ TARGET.com), atol=1e-14)
    # declared in the base frame: moved with the base pose
    T = np.eye(4)
    T[:3, :3] = rotation_from_vector([0.0, 0.0, 0.5])
    T[:3, 3] = [1.0, 0.0, 0.0]
    target = Target.make(
        't',
        10.0,
        [1, 2, 2.5],
        initial_pose=T,
        initial_twist=[0, 0, 0.1, 0, 0, 0],
        initial_frame='base',
    )
    R_b, p_b = rotation_from_vector([0.0, 0.0, math.pi / 2]), np.array([0.0, 2.0, 0.0])
    s0 = target.initial_state((R_b, p_b))
    assert np.allclose(s0.r, [0.0, 3.0, 0.0], atol=1e-14)
    assert np.allclose(s0.R @ s0.w, [0, 0, 0.1], atol=1e-14)
    with pytest.raises(InputError, match='base_pose'):
        target.initial_state()
    # in orbit: a target at rest in LVLH turns at n in N
    s_n = Target.make('t', 10.0, [1, 2, 2.5]).initial_state(orbit=ORBIT)
    assert np.allclose(s_n.R @ s_n.w, ORBIT.angular_velocity, atol=1e-15)
    q = quaternion_from_rotation(s.R)
    assert np.allclose(rotation_from_quaternion(q), s.R, atol=1e-14)


URDF = """<robot name="client_urdf">
  <link name="body">
    <inertial><origin xyz="0.1 0 0"/><mass value="100"/>
      <inertia ixx="10" iyy="12" izz="14" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <joint name="panel_joint" type="fixed"><parent link="body"/><child link="panel"/>
    <origin xyz="1 0 0" rpy="0 0 1.5707963267948966"/></joint>
  <link name="panel">
    <inertial><origin xyz="0 0.5 0"/><mass value="20"/>
      <inertia ixx="1" iyy="2" izz="3" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
  <joint name="fixture_joint" type="fixed"><parent link="body"/><child link="grapple_fixture"/>
    <origin xyz="-0.5 0 0.2" rpy="0 1.5707963267948966 0"/></joint>
  <link name="grapple_fixture"/>
</robot>
"""


def test_a_urdf_target_is_its_links_added_up(tmp_path):
    t = load_target(URDF)
    assert t.mass == 120.0 and t.fixture_name == 'grapple_fixture'
    # the panel's CoM in l: (1, 0, 0) + Rz(90) (0, 0.5, 0) = (0.5, 0, 0); its axes: Rz(90)
    com = (100 * np.array([0.1, 0, 0]) + 20 * np.array([0.5, 0, 0])) / 120
    assert np.allclose(t.com, com, atol=1e-12)
    d1, d2 = np.array([0.1, 0, 0]) - com, np.array([0.5, 0, 0]) - com
    Rz = rotation_from_vector([0, 0, math.pi / 2])

    def shifted(m, d):
        return m * (d @ d * np.eye(3) - np.outer(d, d))

    want = np.diag([10.0, 12, 14]) + shifted(100, d1)
    want += Rz @ np.diag([1.0, 2, 3]) @ Rz.T + shifted(20, d2)
    assert np.allclose(t.inertia, want, atol=1e-9)
    assert np.allclose(t.fixture[:3, 3], [-0.5, 0, 0.2], atol=1e-12)
    assert np.allclose(t.fixture[:3, :3], rotation_from_vector([0, math.pi / 2, 0]), atol=1e-12)
    # the same through a YAML naming the URDF, with an initial state
    (tmp_path / 'client.urdf').write_text(URDF)
    (tmp_path / 'client.yaml').write_text(
        'target:\n  urdf: client.urdf\n  fixture: grapple_fixture\n  initial:\n'
        '    xyz: [1.0, 0.0, 0.0]\n    angular: [0.0, 0.0, 0.05]\n'
    )
    y = load_target(str(tmp_path / 'client.yaml'))
    assert y.mass == 120.0 and np.allclose(y.inertia, t.inertia)
    assert np.allclose(y.initial_twist, [0, 0, 0.05, 0, 0, 0]) and y.initial_pose[0, 3] == 1.0


def test_a_yaml_target():
    t = load_target(
        {
            'name': 'debris',
            'mass': 80.0,
            'inertia': [5.0, 6.0, 7.0, 0.1, 0.0, 0.2],
            'fixture': {'name': 'handle', 'xyz': [0.4, 0.0, 0.0], 'rpy': [0.0, 0.0, 0.3]},
            'initial': {'frame': 'world', 'xyz': [2.0, 0.0, 0.0], 'angular': [0.0, 0.05, 0.0]},
        }
    )
    assert t.name == 'debris' and t.fixture_name == 'handle'
    assert t.inertia[0, 1] == 0.1 and t.inertia[1, 2] == 0.2 and t.inertia[2, 1] == 0.2
    assert np.allclose(t.fixture[:3, 3], [0.4, 0, 0])


@pytest.mark.parametrize(
    'data, match',
    [
        ({'inertia': [1, 1, 1]}, 'mass is missing'),
        ({'mass': -1.0, 'inertia': [1, 1, 1]}, 'mass must be > 0'),
        ({'mass': 1.0, 'inertia': [1, 1, 5]}, 'triangle inequality'),
        ({'mass': 1.0, 'inertia': [1, 1]}, 'principal moments'),
        ({'mass': 1.0, 'inertia': [1, 1, 1], 'color': 'red'}, 'unknown keys'),
        ({'mass': 1.0, 'inertia': [1, 1, 1], 'initial': {'frame': 'moon'}}, 'initial frame'),
        ({'mass': 1.0, 'inertia': [1, 1, 1], 'initial': {'spin': 1}}, 'unknown keys'),
        ({'mass': 1.0, 'inertia': [1, 1, 1], 'fixture': {'xyz': [1, 2]}}, 'fixture.xyz'),
        ({'urdf': 'x.urdf', 'mass': 2.0}, 'come from the URDF'),
    ],
)
def test_bad_declarations_name_the_problem(data, match):
    with pytest.raises(InputError, match=match):
        load_target(data)


def test_bad_urdf_targets_name_the_problem(tmp_path):
    moving = URDF.replace(
        'type="fixed"><parent link="body"/><child link="panel"/>',
        'type="revolute"><parent link="body"/><child link="panel"/><axis xyz="0 0 1"/>',
    )
    with pytest.raises(InputError, match=r"joints \['panel_joint'\] move"):
        load_target(moving)
    with pytest.raises(InputError, match="fixture link 'handle' is not in the URDF"):
        load_target(URDF, fixture='handle')
    with pytest.raises(InputError, match='which link is the grapple fixture'):
        load_target(URDF.replace('grapple_fixture', 'tip'))
    with pytest.raises(InputError, match='missing.yaml'):
        load_target(str(tmp_path / 'missing.yaml'))
    with pytest.raises(InputError, match='gravity: must be zero with an orbit'):
        FreeBody(TARGET, ORBIT, gravity=[0, 0, -9.81])
    with pytest.raises(InputError, match="'lvlh' needs the body's orbit"):
        FixturePrediction(FreeBody(TARGET), _tumbling(), 0.0, 'lvlh')
