"""
Analytic derivatives and batches of the fast path (spart_ros.core.fast.derivatives, .batch).

Checked against central finite differences of the fast path's own inverse and forward dynamics
(a different computation: the O(n) kernels), on a spacecraft with a tree, SPART's SC_3DoF and
the KUKA iiwa with joint damping and friction, both bases; against Pinocchio's
computeRNEADerivatives / computeABADerivatives on the fixed-base KUKA; batches against the
single calls in the same process.
"""

import os

from core_helpers import load_robot, random_rotation, random_tree_urdf, URDF_DIR, urdf_path
import numpy as np
import pytest
from spart_ros.core import robot_from_urdf
from spart_ros.core.errors import InputError
from spart_ros.core.fast import FastDynamics
from spart_ros.core.fast.batch import Batch
from spart_ros.core.fast.derivatives import DynamicsDerivatives

CASES = [
    ('SC_3DoF', True, False),
    ('SC_3DoF', False, False),
    ('branched_two_arm_spacecraft', True, False),
    ('kuka_iiwa', False, True),
]


def _expm(w):
    th = np.linalg.norm(w)
    K = np.array([[0, -w[2], w[1]], [w[2], 0, -w[0]], [-w[1], w[0], 0]])
    if th < 1e-12:
        return np.eye(3) + K
    return np.eye(3) + np.sin(th) / th * K + (1 - np.cos(th)) / th**2 * K @ K


def _setup(name, joint_dynamics, seed=3):
    if joint_dynamics:
        robot = load_robot(name)
        friction = {'damping': 0.5, 'friction': 0.3, 'armature': 0.01}
        robot = robot_from_urdf(
            urdf_path(name), joint_dynamics={j: friction for j in robot.q_names}
        )[0]
    else:
        robot = load_robot(name)
    fd = FastDynamics(robot, gravity=[0.2, -0.3, -9.81], joint_dynamics=joint_dynamics)
    rng = np.random.default_rng(seed)
    nq = fd.n_q
    state = (random_rotation(rng), rng.standard_normal(3), rng.standard_normal(nq))
    return fd, rng, state


def _perturbed(state, k, s):
    R0, r0, qm = state
    nq = len(qm)
    if k < 3:
        return R0 @ _expm(s * np.eye(3)[k]), r0, qm
    if k < 6:
        return R0, r0 + s * np.eye(3)[k - 3], qm
    return R0, r0, qm + s * np.eye(nq)[k - 6]


def _central(f, x_of, size, first, eps=1e-5):
    out = np.zeros((len(f(*x_of(0, 0.0))), size))
    for k in range(first, size):
        out[:, k] = (f(*x_of(k, eps)) - f(*x_of(k, -eps))) / (2 * eps)
    return out


def _close(analytic, numeric, tol=1e-6):
    scale = max(1.0, np.abs(numeric).max())
    assert np.abs(analytic - numeric).max() <= tol * scale, np.abs(analytic - numeric).max()


@pytest.mark.parametrize('name, floating, joint_dynamics', CASES)
def test_derivatives_equal_central_differences(name, floating, joint_dynamics):
    fd, rng, state = _setup(name, joint_dynamics)
    nq, size, first = fd.n_q, 6 + fd.n_q, 0 if floating else 6
    u0, um, a0, am = (rng.standard_normal(k) for k in (6, nq, 6, nq))
    dd = DynamicsDerivatives(fd)
    res = dd.inverse_dynamics(*state, u0, um, a0, am, floating)

    def ID(R0, r0, qm, u0=u0, um=um, a0=a0, am=am):
        return np.concatenate(fd.inverse_dynamics(R0, r0, qm, u0, um, a0, am, floating=floating))

    assert np.allclose(res.tau, ID(*state), rtol=0, atol=1e-10)
    _close(res.dtau_dq, _central(ID, lambda k, s: _perturbed(state, k, s), size, first))
    du = np.eye(size)
    _close(
        res.dtau_du,
        _central(
            lambda *x: ID(*state, *x),
            lambda k, s: (u0 + s * du[k, :6], um + s * du[k, 6:]),
            size,
            first,
        ),
    )
    H = fd.mass_matrix(*state)
    assert np.abs(res.dtau_dudot[first:, first:] - H[first:, first:]).max() < 1e-10
    # forward dynamics
    t0, tm = rng.standard_normal(6), rng.standard_normal(nq)
    fwd = dd.forward_dynamics(*state, u0, um, t0, tm, floating)

    def FD(R0, r0, qm, u0=u0, um=um, t0=t0, tm=tm):
        return np.concatenate(fd.forward_dynamics(R0, r0, qm, u0, um, t0, tm, floating=floating))

    assert np.allclose(fwd.udot, FD(*state), rtol=0, atol=1e-10)
    _close(fwd.dudot_dq, _central(FD, lambda k, s: _perturbed(state, k, s), size, first))
    _close(
        fwd.dudot_du,
        _central(
            lambda *x: FD(*state, *x),
            lambda k, s: (u0 + s * du[k, :6], um + s * du[k, 6:]),
            size,
            first,
        ),
    )
    _close(
        fwd.dudot_dtau,
        _central(
            lambda *x: FD(*state, u0, um, *x),
            lambda k, s: (t0 + s * du[k, :6], tm + s * du[k, 6:]),
            size,
            first,
        ),
    )
    if floating:  # the momentum h0 = H[0:6] u
        mom = dd.momentum(*state, u0, um)
        u = np.concatenate([u0, um])
        assert np.allclose(mom.h0, H[0:6] @ u, atol=1e-10)
        _close(
            mom.dh0_dq,
            _central(
                lambda *x: fd.mass_matrix(*x)[0:6] @ u,
                lambda k, s: _perturbed(state, k, s),
                size,
                0,
            ),
        )


# random trees (branches below the base, prismatic, continuous and fixed joints, offset base
# inertial frame) and real robots: SPART's KUKA iiwa and SC_3DoF, a UR5 and a UFactory xArm7
PIN_ROBOTS = ('tree_1', 'tree_2', 'kuka_iiwa', 'SC_3DoF', 'ur5_robot', 'vendor/xarm7')


def _robot_text(name):
    import xml.etree.ElementTree as ET

    if name.startswith('tree_'):
        return random_tree_urdf(9, seed=int(name[5:]))
    with open(
        os.path.join(URDF_DIR, name + '.urdf') if '/' in name else urdf_path(name),
        encoding='utf-8',
    ) as f:
        text = f.read()
    root = ET.fromstring(text.encode('utf-8'))
    world = [j for j in root.findall('joint') if j.find('parent').get('link') == 'world']
    for el in world + [link for link in root.findall('link') if link.get('name') == 'world']:
        root.remove(el)  # spart_ros drops a 'world' root link (docs/urdf_loading.md)
    return ET.tostring(root, encoding='unicode')


def _rel(ours, ref):
    return np.abs(ours - ref).max() / max(1.0, np.abs(ref).max())


@pytest.mark.parametrize('floating', [True, False], ids=['floating', 'fixed'])
@pytest.mark.parametrize('name', PIN_ROBOTS)
def test_derivatives_equal_pinocchio(name, floating):
    """
    Equal Pinocchio's computeRNEADerivatives / computeABADerivatives in SPART's coordinates.

    The chain rule through the free flyer's coordinates (v = T(R0) u) is the oracle's
    (pinocchio_oracle.rnea_derivatives / aba_derivatives); a fixed base compares the joint blocks.
    """
    # (pin is a pinned requirement: without it this fails, it does not skip)
    from pinocchio_oracle import PinocchioOracle

    text = _robot_text(name)
    robot = robot_from_urdf(text)[0]
    oracle = PinocchioOracle(text, robot.q_names, floating=floating)
    g = np.array([0.4, -1.2, -9.81])
    dd = DynamicsDerivatives(FastDynamics(robot, gravity=g))
    rng = np.random.default_rng(7)
    nq, o = robot.n_q, 0 if floating else 6
    for _ in range(2):
        R0, r0, qm = random_rotation(rng), rng.standard_normal(3), rng.uniform(-2, 2, nq)
        u0, a0 = (rng.standard_normal(6) if floating else np.zeros(6) for _ in range(2))
        um, am = rng.standard_normal(nq), rng.standard_normal(nq)
        ours = dd.inverse_dynamics(R0, r0, qm, u0, um, a0, am, floating)
        ref = oracle.rnea_derivatives(R0, r0, qm, u0, um, a0, am, gravity=g)
        for a, b in zip(ours[1:], ref):
            assert _rel(a[o:, o:], b) < 1e-9, (_rel(a[o:, o:], b), a.shape)
        tau = rng.standard_normal(6 + nq) * 3
        ours = dd.forward_dynamics(R0, r0, qm, u0, um, tau[:6], tau[6:], floating)
        ref = oracle.aba_derivatives(R0, r0, qm, u0, um, tau[o:], gravity=g)
        for a, b in zip(ours[1:], ref):
            assert _rel(a[o:, o:], b) < 1e-9, (_rel(a[o:, o:], b), a.shape)


def test_batches_equal_the_single_calls_on_both_threads():
    fd, rng, _ = _setup('branched_two_arm_spacecraft', False)
    nq, m = fd.n_q, 40
    R0s = np.stack([random_rotation(rng) for _ in range(m)])
    r0s, qms, ums, u0s = (rng.standard_normal((m, k)) for k in (3, nq, nq, 6))
    a0s, ams = rng.standard_normal((m, 6)), rng.standard_normal((m, nq))
    one, two = Batch(fd, threads=1), Batch(fd, threads=2, min_split=2)
    tau = one.inverse_dynamics(R0s, r0s, qms, u0s, ums, a0s, ams).copy()
    assert np.array_equal(tau, two.inverse_dynamics(R0s, r0s, qms, u0s, ums, a0s, ams))
    udot = two.forward_dynamics(R0s, r0s, qms, u0s, ums, a0s, ams)
    H, J = two.mass_matrix(R0s, r0s, qms), two.jacobian(3, R0s, r0s, qms)
    H_given = one.mass_matrix(R0s, r0s, qms, out=np.full(H.shape, np.nan))
    dd = DynamicsDerivatives(fd)
    fdd = two.forward_dynamics_derivatives(R0s, r0s, qms, u0s, ums, a0s, ams)
    for k in (0, m // 2 - 1, m // 2, m - 1):
        s = (R0s[k], r0s[k], qms[k])
        assert np.array_equal(
            tau[k], np.concatenate(fd.inverse_dynamics(*s, u0s[k], ums[k], a0s[k], ams[k]))
        )
        assert np.array_equal(
            udot[k], np.concatenate(fd.forward_dynamics(*s, u0s[k], ums[k], a0s[k], ams[k]))
        )
        assert np.array_equal(H[k], fd.mass_matrix(*s))
        assert np.array_equal(H_given[k], H[k])  # the caller's array, NaN before: every entry set
        assert np.array_equal(J[k], fd.jacobian(3, *s, bias=False)[0])
        single = dd.forward_dynamics(*s, u0s[k], ums[k], a0s[k], ams[k])
        assert all(np.array_equal(a[k], b) for a, b in zip(fdd, single))
    bad = qms.copy()
    bad[7, 1] = np.nan
    with pytest.raises(InputError, match='state 7'):
        two.inverse_dynamics(R0s, r0s, bad, u0s, ums, a0s, ams)
    # the threads claim chunks of states in turn: whichever meets which, the first bad one is named
    bad[m - 3, 0] = np.inf
    for _ in range(5):
        with pytest.raises(InputError, match=r'state 7\b'):
            two.forward_dynamics(R0s, r0s, bad, u0s, ums, a0s, ams)
    bad[7, 1] = 0.0
    with pytest.raises(InputError, match=f'state {m - 3}'):
        two.mass_matrix(R0s, r0s, bad)
    with pytest.raises(InputError, match='one row per state'):
        two.inverse_dynamics(R0s, r0s, qms[:-1], u0s, ums, a0s, ams)
