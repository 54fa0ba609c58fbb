"""
The capture of a tumbling target (spart_ros.control.capture and its units), without a plant.

The loop is closed on the core's forward dynamics (test/capture_sim.py: the chaser, a 7-joint arm
on a 400 kg spacecraft, and the target integrated as two free bodies, then as one after the
attachment), zero gravity, 100 Hz:

- the approach path against finite differences of its own pose (twist, acceleration), its ends
  (where the end effector starts; the grasp frame at rest relative to the fixture);
- the held-base Jacobian: J qd + drift is the end effector's twist at any state;
- the held-base dynamics against forward dynamics (the base's angular acceleration is the one
  imposed, the joints' too);
- a capture at 5 deg/s (module fixture, one run): the relative pose and twist converge to the grasp
  tolerances; the base attitude moves less than 0.1 deg before the grasp; no joint beyond its
  rate or effort limit; momentum of robot + target the same before and after the attachment to
  1e-9 relative (the grasp's impulse is internal); the detumble brings every rate to rest within
  its timeout, the wheels holding what the system had (robot + target + wheels conserved);
- refused before any attempt, naming the cause: out of reach, too fast;
- the model after the grasp: the target's mass, CoM and inertia in it, the joints the same.
"""

import math

from capture_sim import CaptureSim, chaser, EE, Q0, run, tumbling_target_state
import numpy as np
import pytest
from spart_ros.control.capture import Capture
from spart_ros.control.capture_goal import CaptureGoal, CaptureRefused, OUT_OF_REACH, TOO_FAST
from spart_ros.control.capture_motion import CaptureMotion, held_base_dynamics
from spart_ros.control.capture_reference import ApproachPath
from spart_ros.control.grasp import capture_model, grasp_error, GraspCheck, GraspTolerances
from spart_ros.core.base_state import base_from_link_frame
from spart_ros.core.fast import FastDynamics
from spart_ros.core.free_body import FixturePrediction, FreeBody
from spart_ros.core.rigid_motion import rotation_from_vector, rotation_vector
from spart_ros.core.target import Target

pytestmark = pytest.mark.filterwarnings('ignore::spart_ros.core.errors.SpartWarning')

ROBOT = chaser()


def _fixture():
    F = np.eye(4)
    F[:3, 3] = [0.5, 0.0, 0.0]
    F[:3, :3] = rotation_from_vector([0.0, -math.pi / 2, 0.0])
    return F


TARGET = Target.make('client', 150.0, [20.0, 25.0, 18.0], fixture=_fixture())


def _pose(R, p):
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = R, p
    return T


def _prediction(rate=8.0, seed=4):
    state = tumbling_target_state(TARGET, ROBOT, Q0, distance=0.15, rate_deg=rate, seed=seed)
    return FixturePrediction(FreeBody(TARGET), state, 0.0)


@pytest.mark.parametrize('standoff', [0.0, 0.1])
def test_the_approach_path_is_smooth_and_ends_on_the_fixture_at_rest(standoff):
    pred = _prediction()
    start = _pose(rotation_from_vector([0.1, -0.2, 0.3]), np.array([0.5, 0.1, 0.4]))
    G = _pose(rotation_from_vector([0.0, 0.0, 0.4]), np.array([0.0, 0.0, -0.05]))
    path = ApproachPath(pred, start, 0.0, 3.0, G, standoff=standoff)
    s0 = path.sample(0.0)
    assert np.allclose(s0.R, start[:3, :3], atol=1e-12) and np.allclose(s0.p, start[:3, 3])
    h = 1e-4
    for t in (0.4, 1.3, 2.2, 2.95, 3.5):
        a, b, s = path.sample(t - h), path.sample(t + h), path.sample(t)
        twist = np.concatenate([rotation_vector(b.R @ a.R.T), b.p - a.p]) / (2 * h)
        assert np.abs(s.twist - twist).max() < 1e-7
        assert np.abs(s.acceleration - (b.twist - a.twist) / (2 * h)).max() < 1e-6
    for t in (3.0, 3.7):  # synchronised: on the grasp frame, moving with the fixture
        s = path.sample(t)
        m = pred.motion(t)
        R_g, p_g = m.R @ G[:3, :3], m.p + m.R @ G[:3, 3]
        assert s.stage == 'synchronise' and s.sigma == 0.0
        err = grasp_error(s.R, s.p, s.twist, m, G)
        assert max(err.distance, err.angle, err.linear, err.angular) < 1e-12
        assert np.allclose(s.R, R_g, atol=1e-12) and np.allclose(s.p, p_g, atol=1e-12)
    if standoff:  # at the stand-off: on the approach axis, standoff behind the grasp frame
        s = path.sample(path.t1)
        m = pred.motion(path.t1)
        T_g = _pose(m.R, m.p) @ G
        assert np.allclose(s.p, T_g[:3, 3] - standoff * T_g[:3, 2], atol=1e-12)


def _random_state(rng, robot):
    R_b = rotation_from_vector(rng.normal(size=3) * 0.5)
    base = type('Base', (), {})()
    base.R_b, base.p_b = R_b, rng.normal(size=3)
    base.v_b, base.w_b = rng.normal(size=3) * 0.1, rng.normal(size=3) * 0.1
    state = type('State', (), {})()
    state.base, state.q, state.qd = base, rng.uniform(-1, 1, robot.n_q), rng.normal(size=7) * 0.3
    return state


def test_the_held_base_jacobian_gives_the_end_effector_twist_and_the_dynamics_hold():
    rng = np.random.default_rng(2)
    law = CaptureMotion(ROBOT, EE)
    fd = FastDynamics(ROBOT)
    for _ in range(3):
        s = _random_state(rng, ROBOT)
        R0, r0, u0 = base_from_link_frame(ROBOT, s.base.R_b, s.base.p_b, s.base.v_b, s.base.w_b)
        ff = law.kinematics.update(R0, r0, s.q, u0, s.qd)
        M = law.mass
        J = ff.Jm - ff.J0[:, 3:6] @ ff.H0m[3:6] / M
        drift = (
            ff.J0[:, 0:3] @ u0[0:3] + ff.J0[:, 3:6] @ (ff.h0[3:6] - ff.H0[3:6, 0:3] @ u0[0:3]) / M
        )
        assert np.allclose(J @ s.qd + drift, ff.J0 @ u0 + ff.Jm @ s.qd, rtol=0, atol=1e-12)
        # the base's angular acceleration and the joints' as imposed, by forward dynamics
        H = np.array(fd.mass_matrix(R0, r0, s.q))
        bias = np.concatenate(fd.inverse_dynamics(R0, r0, s.q, u0, s.qd, np.zeros(6), np.zeros(7)))
        alpha, qdd = rng.normal(size=3), rng.normal(size=7)
        u0dot, tau0, taum = held_base_dynamics(H, bias, alpha, qdd)
        assert np.allclose(tau0[3:6], 0.0)
        a0, am = fd.forward_dynamics(R0, r0, s.q, u0, s.qd, tau0, taum)
        assert np.allclose(a0[0:3], alpha, atol=1e-9) and np.allclose(am, qdd, atol=1e-9)
        assert np.allclose(a0, u0dot, atol=1e-9)


RATE = 5.0  # deg/s


@pytest.fixture(scope='module')
def captured():
    state = tumbling_target_state(TARGET, ROBOT, Q0, distance=0.15, rate_deg=RATE, seed=0)
    sim = CaptureSim(ROBOT, TARGET, Q0, state)
    capture = Capture(ROBOT, TARGET, EE)
    goal = CaptureGoal(tolerances=GraspTolerances(0.005, 0.01, 0.005, 0.005, 0.2))
    log, grasp = run(capture, sim, goal, 30.0)
    return capture, sim, goal, log, grasp


def test_the_approach_synchronises_with_the_tumbling_fixture(captured):
    capture, sim, goal, log, grasp = captured
    phases = list(dict.fromkeys(log['phase']))
    assert phases == ['approach', 'synchronise', 'detumble', 'done'], phases
    i = int(np.flatnonzero(log['phase'] == 'detumble')[0]) - 1  # the tick of the grasp
    tol = goal.tolerances
    assert log['distance'][i] <= tol.position and log['angle'][i] <= tol.orientation
    assert log['linear'][i] <= tol.linear and log['angular'][i] <= tol.angular
    # within them for the dwell time before it
    dwell = int(round(tol.dwell / sim.dt))
    assert np.all(log['distance'][i - dwell : i + 1] <= tol.position)
    # the grasp came soon after the planned time (the synchronisation converged)
    assert log['t'][i] - goal.plan.t_grasp < 0.5
    # the base attitude held before the grasp; no joint beyond its limits at any time
    assert np.rad2deg(log['base_angle'][: i + 1].max()) < 0.1
    rates = np.array([j.limits.velocity for j in ROBOT.joints if j.q_id > 0])
    efforts = np.array([j.limits.effort for j in ROBOT.joints if j.q_id > 0])
    assert np.all(np.abs(log['qd']) <= rates) and np.all(np.abs(log['efforts']) <= efforts)
    # the target moved: a tumble, not a still fixture
    assert np.abs(log['angular'][0]) > 0.5 * np.deg2rad(RATE)


def test_the_grasp_keeps_the_momentum_of_robot_and_target(captured):
    _, sim, _, _, (before, after) = captured
    assert np.abs(after - before).max() <= 1e-9 * np.abs(before).max()
    # the impulse at the grasp: internal, and small at a synchronised grasp
    assert np.linalg.norm(sim.attached.impulse[3:6]) < 0.05 * TARGET.mass * 1e-2


def test_the_detumble_brings_the_stack_to_rest_and_the_wheels_keep_the_momentum(captured):
    capture, sim, goal, log, _ = captured
    assert goal.status == 'succeeded', goal.message
    t_done = goal.started['done']
    assert t_done - goal.started['detumble'] < goal.detumble_timeout
    assert np.all(capture.law.command(sim.link_state()).rates <= capture.law.rest_tolerances)
    total = log['momentum'][:, 0:3] + log['wheel_momentum']
    assert np.abs(total - total[0]).max() < 1e-6 * np.abs(total[0]).max()
    # the wheels hold what the robot and the target had (the stack at rest: what the rest
    # tolerances leave is 3 % of it here)
    assert np.linalg.norm(sim.wheel_momentum - total[0]) < 0.1 * np.linalg.norm(total[0])
    # the model carries the target from the grasp on
    assert capture.model.n_q == ROBOT.n_q and capture.model.q_names == ROBOT.q_names
    mass = sum(lk.mass for lk in capture.model.links) + capture.model.base_link.mass
    assert mass == pytest.approx(ROBOT.base_link.mass + sum(lk.mass for lk in ROBOT.links) + 150.0)


def test_a_target_out_of_reach_or_too_fast_is_refused_before_any_attempt():
    def refused(target, rate, distance, axis=None):
        state = tumbling_target_state(target, ROBOT, Q0, distance, rate, axis=axis)
        capture = Capture(ROBOT, target, EE)
        sim = CaptureSim(ROBOT, target, Q0, state)
        capture.set_estimate(state, 0.0)
        goal = CaptureGoal(approach_timeout=4.0)
        with pytest.raises(CaptureRefused) as err:
            capture.submit(goal, sim.link_state(), 0.0)
        assert goal.status == 'aborted' and goal.error_code == err.value.code
        assert capture.phase == 'idle'
        return err.value

    far = refused(TARGET, 2.0, 1.5)
    assert far.code == OUT_OF_REACH and 'out of reach' in str(far) and 'reaches' in str(far)
    # a fixture at the CoM spinning about the tool axis: in reach, but the wrist cannot follow
    # 100 deg/s (its limit 1.7 rad/s = 97 deg/s); 60 deg/s it can
    spin = Target.make('spinner', 150.0, [20.0, 25.0, 18.0])
    fast = refused(spin, 100.0, 0.1, axis=[0.0, 0.0, 1.0])
    assert fast.code == TOO_FAST and 'too fast' in str(fast)
    assert "needs 'arm_joint_7' at 1." in str(fast) and 'its limit 1.7' in str(fast), fast
    fine = tumbling_target_state(spin, ROBOT, Q0, distance=0.1, rate_deg=60.0, axis=[0, 0, 1])
    capture = Capture(ROBOT, spin, EE)
    capture.set_estimate(fine, 0.0)
    goal = capture.submit(CaptureGoal(), CaptureSim(ROBOT, spin, Q0, fine).link_state(), 0.0)
    assert goal.status == 'active' and capture.phase == 'approach'
    assert 0.5 < goal.plan.peak_rate <= 0.8, goal.plan.message


def test_the_grasp_criteria_and_the_model_after_the_grasp():
    tol = GraspTolerances(position=0.01, orientation=0.02, linear=0.01, angular=0.01, dwell=0.3)
    check = GraspCheck(tol)
    m = _prediction().motion(0.0)
    R, p = m.R.copy(), m.p + np.array([0.0, 0.0, 0.004])
    twist = m.twist.copy()  # the fixture's motion at p, and 2 mm/s along z more
    twist[3:6] += np.cross(m.twist[0:3], p - m.p) + [0.0, 0.0, 0.002]
    err = grasp_error(R, p, twist, m)
    assert err.distance == pytest.approx(0.004) and err.linear == pytest.approx(0.002, abs=1e-12)
    assert [check.update(t, err) for t in (0.0, 0.2, 0.31)] == [False, False, True]
    far = err._replace(distance=0.02)
    assert not check.update(0.4, far) and 'distance 0.02 m > 0.01' in tol.describe(far)
    with pytest.raises(Exception, match='position'):
        GraspTolerances(position=0.0)
    T = _pose(rotation_from_vector([0.1, 0.2, 0.3]), np.array([0.2, 0.0, 0.1]))
    model = capture_model(ROBOT, EE, TARGET, T)
    assert model.n_q == ROBOT.n_q and [j.limits for j in model.joints if j.q_id > 0] == [
        j.limits for j in ROBOT.joints if j.q_id > 0
    ]
    payload = model.link(model.keys.link_id['client'])
    assert payload.mass == 150.0 and np.allclose(payload.inertia, TARGET.inertia)
