"""
The mpc modes (spart_ros.control.mpc, .mpc_problem).

- the horizon's QP against an independent dense solution of the same problem (least squares
  through the rolled-out double integrator, and SLSQP with an active effort limit);
- on the reference with no limit active, a tick of mpc is computed torque's;
- on the MuJoCo plant (the offline closed loop, lockstep): the KUKA iiwa tracks at least as well
  as in computed_torque; a fast move under tight effort limits, where computed torque saturates,
  overshoots the joint's position limit and its velocity limit, stays inside every limit in mpc;
  a free-floating 7-joint arm moves its end effector as floating_base does (to a millimetre) and
  turns its base far less; a missed deadline is computed torque's tick, reported.

The solve-time figures (100 Hz) are benchmarks/bench_mpc.py's.
"""

from core_helpers import load_robot, urdf_path
import numpy as np
import pytest
from spart_ros.control.settings import ControllerSettings
from spart_ros.core.errors import InputError

KUKA = urdf_path('kuka_iiwa')
Q1 = np.array([0.5, 0.4, -0.3, -0.8, 0.2, 0.5, -0.4])


def _qp_problem(n=2, K=8, h=0.05, weights=(1e4, 200.0, 1.0, 0.0, 0.0), effort=None):
    from spart_ros.control.mpc_problem import HorizonQP, Linearization

    rng = np.random.default_rng(3)
    M = np.stack([np.eye(n) + 0.1 * rng.standard_normal((n, n)) for _ in range(K)])
    M = 0.5 * (M + np.swapaxes(M, 1, 2)) + np.eye(n)
    Dq, Dv = 0.3 * rng.standard_normal((K, n, n)), 0.2 * rng.standard_normal((K, n, n))
    offset = rng.standard_normal((K, n))
    qp = HorizonQP(n, K, h, weights, effort=effort)
    lin = Linearization(offset, Dq, Dv, M)
    e0, ed0 = np.array([0.02, -0.01]), np.array([0.3, 0.1])
    zero = (np.zeros((K + 1, n)), np.zeros((K + 1, n)), np.zeros((K, n)))
    return qp, lin, (e0, ed0), zero


def _rollout(d, e0, ed0, h):
    e, ed = [e0], [ed0]
    for dk in d:
        e.append(e[-1] + h * ed[-1] + 0.5 * h * h * dk)
        ed.append(ed[-1] + h * dk)
    return np.array(e), np.array(ed)


def test_the_horizon_qp_solves_the_double_integrator_problem():
    """
    Plan as the dense problem's optimum.

    Unconstrained: the least-squares plan; with an effort limit active: a feasible plan that meets
    the Karush-Kuhn-Tucker conditions (the cost's gradient balanced by the active limits' with
    multipliers >= 0).
    """
    n, K, h = 2, 8, 0.05
    wp, wv, wa = 1e4, 200.0, 1.0
    qp, lin, (e0, ed0), zero = _qp_problem(n, K, h)
    plan = qp.solve((e0, ed0), zero[:2], lin, zero)

    def residuals(x):  # the cost is the sum of their squares; they and the efforts are affine
        d = x.reshape(K, n)
        e, ed = _rollout(d, e0, ed0, h)
        return np.sqrt(h) * np.concatenate(
            [np.sqrt(wp) * e[1:].ravel(), np.sqrt(wv) * ed[1:].ravel(), np.sqrt(wa) * x]
        )

    def efforts(x):
        d = x.reshape(K, n)
        e, ed = _rollout(d, e0, ed0, h)
        out = lin.effort_offset + np.einsum('kij,kj->ki', lin.M, d)
        out[1:] += np.einsum('kij,kj->ki', lin.Dq[1:], e[1:K]) + np.einsum(
            'kij,kj->ki', lin.Dv[1:], ed[1:K]
        )
        return out.ravel()

    eye = np.eye(K * n)
    r0, c0 = residuals(np.zeros(K * n)), efforts(np.zeros(K * n))
    J = np.stack([residuals(x) - r0 for x in eye], axis=1)
    C = np.stack([efforts(x) - c0 for x in eye], axis=1)
    free = np.linalg.lstsq(J, -r0, rcond=None)[0]
    assert np.abs(plan.d.ravel() - free).max() < 1e-3 * np.abs(free).max()
    e, ed = _rollout(plan.d, e0, ed0, h)
    assert np.allclose(plan.e, e, atol=1e-12) and np.allclose(plan.ed, ed, atol=1e-12)
    limit = 0.7 * np.abs(c0 + C @ free).max()  # active
    qp, lin, _, _ = _qp_problem(n, K, h, effort=np.full(n, limit))
    plan = qp.solve((e0, ed0), zero[:2], lin, zero)

    x = plan.d.ravel()
    c = c0 + C @ x
    assert np.abs(c).max() < limit * (1 + 1e-3)
    grad = 2 * J.T @ (r0 + J @ x)
    active = np.flatnonzero(np.abs(c) > limit * (1 - 1e-3))
    assert len(active)
    G = np.sign(c[active])[:, None] * C[active]  # the active limits' gradients
    mult = np.linalg.lstsq(G.T, -grad, rcond=None)[0]
    assert np.abs(grad + G.T @ mult).max() < 1e-3 * np.abs(grad).max()
    assert mult.min() > -1e-3 * np.abs(mult).max()


def _law(mode, robot_name='kuka_iiwa', **settings):
    from spart_ros.control.effort_laws import Gains
    from spart_ros.control.modes import build_law
    from spart_ros.core.fast.mimic import fast_dynamics

    robot = load_robot(robot_name)
    fd = fast_dynamics(robot, [0.0, 0.0, -9.81])
    s = ControllerSettings(**dict({'mode': mode, 'mpc_deadline': 1.0}, **settings))
    n = fd.n_q
    return build_law(mode, fd, s, Gains(n, 100.0, 20.0)), fd


def test_on_the_reference_a_tick_is_computed_torque():
    from types import SimpleNamespace

    from spart_ros.control.effort_laws import ComputedTorque, Gains
    from spart_ros.control.trajectory import Reference

    law, fd = _law('mpc')
    n = fd.n_q
    base = SimpleNamespace(R_b=np.eye(3), p_b=np.zeros(3), v_b=np.zeros(3), w_b=np.zeros(3))
    ref = Reference(Q1, np.full(n, 0.3), np.full(n, -0.5))
    state = SimpleNamespace(base=base, q=Q1.copy(), qd=ref.velocity.copy())
    out = law.command(state, ref, 0.0, 0.001)
    ct = ComputedTorque(fd.new_workspace(), Gains(n, 100.0, 20.0)).command(state, ref, 0.0, 0.001)
    assert law.solves == 1 and not law.details.fallback
    assert np.abs(out.values - ct.values).max() < 1e-6 * np.abs(ct.values).max()


def _kuka(mode, duration, trajectory, **settings):
    from spart_ros.sim.closed_loop import simulate

    s = dict({'mode': mode, 'mpc_deadline': 1.0, 'max_tracking_error': 0.0}, **settings)
    return simulate(KUKA, s, duration=duration, trajectory=trajectory)


def _finite(run):
    ok = np.isfinite(run.q - run.q_ref).all(axis=1)
    return run.q[ok], run.qd[ok], run.q_ref[ok], run.commands[ok]


def test_mpc_tracks_at_least_as_well_as_computed_torque():
    runs = {m: _kuka(m, 1.0, [(1.0, Q1)]) for m in ('computed_torque', 'mpc')}
    rms = {}
    for mode, run in runs.items():
        q, _, q_ref, _ = _finite(run)
        rms[mode] = np.sqrt(np.mean((q - q_ref) ** 2))
    law = runs['mpc'].controller.law
    assert law.solves >= 95 and law.misses == 0
    assert rms['mpc'] <= rms['computed_torque'], rms
    assert rms['computed_torque'] < 5e-4  # both track (a sanity bound, 1.1e-4 here)


def test_under_tight_limits_mpc_stays_inside_every_limit():
    """A 0.6 s move of joint 2 near its limit with 100 N m: computed torque saturates."""
    robot = load_robot('kuka_iiwa')
    joints = [j for j in robot.joints if j.type != 0]
    upper = np.array([j.limits.upper for j in joints])
    velocity = np.array([j.limits.velocity for j in joints])
    goal = [(0.6, np.array([0.0, 1.9, 0.0, 0.0, 0.0, 0.0, 0.0]))]
    out = {}
    for mode in ('computed_torque', 'mpc'):
        q, qd, q_ref, u = _finite(_kuka(mode, 1.0, goal, effort_limits=[100.0]))
        out[mode] = (np.abs(q - q_ref).max(), np.max(q - upper), np.abs(qd).max(), np.abs(u).max())
    ct, mpc = out['computed_torque'], out['mpc']
    assert ct[1] > 0.1 and ct[2] > velocity.max()  # beyond the position and velocity limits
    assert mpc[1] < 0 and mpc[2] < velocity.max() and mpc[3] <= 100.0
    assert mpc[0] < 0.1 * ct[0], out


def test_floating_end_effector_task_turns_the_base_less_for_the_same_motion():
    """
    Move the end effector of arm7_floating as floating_base does, turning its base far less.

    arm7_floating: a 5 kg base, a 17 kg arm; the end effector's path in the base frame as
    floating_base follows the joint reference (to a millimetre), the base turned ~20x less.
    """
    from spart_ros.core.fast import FastDynamics
    from spart_ros.core.rigid_motion import rotation_vector
    from spart_ros.sim.closed_loop import simulate

    robot = load_robot('arm7_floating')
    q0 = np.array([-0.12, 0.71, -0.65, -1.08, -0.23, -0.72, -0.98])
    goal = np.array([-0.05, 0.55, -0.51, -1.32, 0.12, -0.83, -1.3])
    fd, ee = FastDynamics(robot), robot.n_links_joints

    def ee_in_base(q):
        fd.jacobian(ee, np.eye(3), np.zeros(3), q, bias=False)
        R, x = fd.link_pose(ee)
        return x.copy()

    result = {}
    for mode in ('floating_base', 'floating_mpc'):
        run = simulate(
            urdf_path('arm7_floating'),
            {
                'mode': mode,
                'mpc_task': 'end_effector',
                'mpc_weights': (1e7, 1e5, 1.0, 1e5, 1e3),
                'mpc_posture_weight': 1.0,
                'mpc_deadline': 1.0,
                'max_tracking_error': 0.0,
            },
            base='floating',
            gravity=(0.0, 0.0, 0.0),
            duration=1.7,
            trajectory=[(1.5, goal)],
            initial=dict(zip(robot.q_names, q0)),
        )
        q, _, q_ref, _ = _finite(run)
        ee_err = max(
            np.linalg.norm(ee_in_base(a) - ee_in_base(b)) for a, b in zip(q[::20], q_ref[::20])
        )
        R = np.asarray(run.base_rotation)
        turn = max(np.linalg.norm(rotation_vector(R[0].T @ Rk)) for Rk in R[::20])
        result[mode] = (ee_err, np.degrees(turn))
    ct, mpc = result['floating_base'], result['floating_mpc']
    assert ct[1] > 5.0 and mpc[1] < 0.1 * ct[1], result
    assert mpc[0] < 1.5e-3, result  # the same end-effector motion, to a millimetre


def test_a_missed_deadline_is_computed_torque_and_reported():
    from types import SimpleNamespace

    from spart_ros.control.trajectory import Reference

    run = _kuka('mpc', 0.1, [(1.0, Q1)], mpc_deadline=1e-9)
    ct = _kuka('computed_torque', 0.1, [(1.0, Q1)])
    law = run.controller.law
    assert law.solves == 0 and law.misses >= 10
    assert 'past mpc_deadline' in law.message and law.details.fallback
    assert np.allclose(run.commands, ct.commands, atol=1e-9, equal_nan=True)
    notes = []
    law, fd = _law('mpc', mpc_deadline=1e-9)
    law.notify = lambda level, key, text: notes.append((level, key, text))
    base = SimpleNamespace(R_b=np.eye(3), p_b=np.zeros(3), v_b=np.zeros(3), w_b=np.zeros(3))
    zero = np.zeros(fd.n_q)
    law.command(SimpleNamespace(base=base, q=Q1, qd=zero), Reference(Q1, zero, zero), 0.0, 0.0)
    ((level, key, text),) = notes
    assert level == 'warning' and 'past mpc_deadline' in text and 'computed torque' in text


@pytest.mark.parametrize(
    'settings, match',
    [
        ({'mpc_steps': 1}, 'mpc_steps'),
        ({'mpc_weights': (1.0, 2.0)}, 'mpc_weights'),
        ({'mpc_task': 'base'}, 'mpc_task'),
        ({'mpc_posture_weight': -1.0}, 'mpc_posture_weight'),
        ({'mode': 'floating_mpc'}, 'base: floating'),
    ],
)
def test_mpc_settings_are_checked(settings, match):
    with pytest.raises(InputError, match=match):
        ControllerSettings(**dict({'mode': 'mpc'}, **settings)).check()
