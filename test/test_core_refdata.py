"""
Every SPART function against SPART's own outputs (test/data/spart/*.json).

For each model, each of the 5 stored states and each stored output, the SPART-named
function of ``spart_ros.spart`` is called exactly as the JSON's ``calls`` says and must
match to 1e-10 relative (max |ours - ref| / max(1, max |ref|)).  ``outputs_patched``
(SPART with its known bugs fixed) is used instead of ``outputs`` where a state has it.
"""

from functools import lru_cache
import json
import os

from core_helpers import REF_DIR, REF_MODELS, rel_err
import numpy as np
import pytest
from spart_ros import spart

TOL = 1e-10
FUNCTIONS = (
    'Kinematics',
    'DiffKinematics',
    'Velocities',
    'Jacob',
    'Accelerations',
    'Jacobdot',
    'Center_of_Mass',
    'NOC',
    'NOCdot',
    'I_I',
    'MCB',
    'GIM',
    'CIM',
    'GIM_NOC',
    'CIM_NOC',
    'FD',
    'ID',
    'Floating_ID',
)


@lru_cache(maxsize=None)
def reference(model):
    with open(os.path.join(REF_DIR, model + '.json'), encoding='utf-8') as f:
        return json.load(f)


@lru_cache(maxsize=None)
def model_robot(model):
    robot, keys = spart.urdf2robot(os.path.join(REF_DIR, 'urdf', model + '.urdf'))
    return robot, keys


def stored(value, shape):
    """
    Return a stored array with its MATLAB shape.

    ``shapes.*.stored``; empty arrays lose it in JSON.
    """
    return np.asarray(value, dtype=float).reshape(shape)


def inputs_of(ref, state):
    shapes = ref['shapes']['inputs']
    return {k: stored(v, shapes[k]['stored']) for k, v in state['inputs'].items()}


def compute_all(robot, x):
    """All outputs of every SPART function, named as in the JSON ``calls``."""
    n = robot.n_links_joints
    R0, r0, qm, u0, um = x['R0'], x['r0'], x['qm'], x['u0'], x['um']
    res = {}
    RJ, RL, rJ, rL, e, g = spart.Kinematics(R0, r0, qm, robot)
    res['Kinematics'] = {'RJ': RJ, 'RL': RL, 'rJ': rJ, 'rL': rL, 'e': e, 'g': g}
    Bij, Bi0, P0, pm = spart.DiffKinematics(R0, r0, rL, e, g, robot)
    res['DiffKinematics'] = {'Bij': Bij, 'Bi0': Bi0, 'P0': P0, 'pm': pm}
    t0, tL = spart.Velocities(Bij, Bi0, P0, pm, u0, um, robot)
    res['Velocities'] = {'t0': t0, 'tL': tL}
    J0_base, Jm_base = spart.Jacob(r0, r0, rL, P0, pm, 0, robot)
    links = [spart.Jacob(rL[:, i], r0, rL, P0, pm, i + 1, robot) for i in range(n)]
    rp = rL[:, n - 1] + RL[:, :, n - 1] @ x['p_off']
    J0_p, Jm_p = spart.Jacob(rp, r0, rL, P0, pm, n, robot)
    tp = J0_p @ u0 + Jm_p @ um
    res['Jacob'] = {
        'J0_base': J0_base,
        'Jm_base': Jm_base,
        'J0_links': np.stack([j[0] for j in links], -1),
        'Jm_links': np.stack([j[1] for j in links], -1),
        'rp': rp,
        'tp': tp,
        'J0_p': J0_p,
        'Jm_p': Jm_p,
    }
    t0dot, tLdot = spart.Accelerations(
        t0, tL, P0, pm, Bi0, Bij, u0, um, x['u0dot'], x['umdot'], robot
    )
    res['Accelerations'] = {'t0dot': t0dot, 'tLdot': tLdot}
    J0dot_base, Jmdot_base = spart.Jacobdot(r0, t0, r0, t0, rL, tL, P0, pm, 0, robot)
    links = [
        spart.Jacobdot(rL[:, i], tL[:, i], r0, t0, rL, tL, P0, pm, i + 1, robot) for i in range(n)
    ]
    J0dot_p, Jmdot_p = spart.Jacobdot(rp, tp, r0, t0, rL, tL, P0, pm, n, robot)
    res['Jacobdot'] = {
        'J0dot_base': J0dot_base,
        'Jmdot_base': Jmdot_base,
        'J0dot_links': np.stack([j[0] for j in links], -1),
        'Jmdot_links': np.stack([j[1] for j in links], -1),
        'J0dot_p': J0dot_p,
        'Jmdot_p': Jmdot_p,
    }
    res['Center_of_Mass'] = {
        'r_com': spart.Center_of_Mass(r0, rL, robot),
        'r_com_dot': spart.Center_of_Mass(t0[3:6], tL[3:6, :], robot),
        'r_com_ddot': spart.Center_of_Mass(t0dot[3:6], tLdot[3:6, :], robot),
    }
    N = spart.NOC(r0, rL, P0, pm, robot)
    Ndot = spart.NOCdot(r0, t0, rL, tL, P0, pm, robot)
    res['NOC'] = {'N': N}
    res['NOCdot'] = {'Ndot': Ndot}
    I0, Im = spart.I_I(R0, RL, robot)
    res['I_I'] = {'I0': I0, 'Im': Im}
    M0_tilde, Mm_tilde = spart.MCB(I0, Im, Bij, Bi0, robot)
    res['MCB'] = {'M0_tilde': M0_tilde, 'Mm_tilde': Mm_tilde}
    H0, H0m, Hm = spart.GIM(M0_tilde, Mm_tilde, Bij, Bi0, P0, pm, robot)
    res['GIM'] = {'H0': H0, 'H0m': H0m, 'Hm': Hm}
    C0, C0m, Cm0, Cm = spart.CIM(t0, tL, I0, Im, M0_tilde, Mm_tilde, Bij, Bi0, P0, pm, robot)
    res['CIM'] = {'C0': C0, 'C0m': C0m, 'Cm0': Cm0, 'Cm': Cm}
    res['GIM_NOC'] = {'H': spart.GIM_NOC(N, I0, Im, robot)}
    res['CIM_NOC'] = {'C': spart.CIM_NOC(N, Ndot, t0, tL, I0, Im, robot)}
    u0dot, umdot = spart.FD(
        x['tau0'], x['taum'], x['wF0'], x['wFm'], t0, tL, P0, pm, I0, Im, Bij, Bi0, u0, um, robot
    )
    res['FD'] = {'u0dot': u0dot, 'umdot': umdot}
    tau0, taum = spart.ID(
        x['wF0'], x['wFm'], t0, tL, t0dot, tLdot, P0, pm, I0, Im, Bij, Bi0, robot
    )
    res['ID'] = {'tau0': tau0, 'taum': taum}
    taum, u0dot = spart.Floating_ID(
        x['wF0'],
        x['wFm'],
        Mm_tilde,
        H0,
        t0,
        tL,
        P0,
        pm,
        I0,
        Im,
        Bij,
        Bi0,
        u0,
        um,
        x['umdot'],
        robot,
    )
    res['Floating_ID'] = {'taum': taum, 'u0dot': u0dot}
    return res


@lru_cache(maxsize=None)
def results(model):
    ref = reference(model)
    robot, _ = model_robot(model)
    return [compute_all(robot, inputs_of(ref, s)) for s in ref['states']]


def test_reference_files_cover_every_function():
    for model in REF_MODELS:
        for s in reference(model)['states']:
            assert set(s.get('outputs_patched', s['outputs'])) == set(FUNCTIONS), model


@pytest.mark.parametrize('function', FUNCTIONS)
@pytest.mark.parametrize('model', REF_MODELS)
def test_function_matches_spart(model, function):
    ref = reference(model)
    shapes = ref['shapes']['outputs'][function]
    failures = []
    n_checked = 0
    for k, (state, ours) in enumerate(zip(ref['states'], results(model))):
        outputs = state.get('outputs_patched', state['outputs'])[function]
        assert set(outputs) == set(ours[function]), (
            f'{model} {function}: outputs {sorted(outputs)}'
        )
        for name, value in outputs.items():
            want = stored(value, shapes[name]['stored'])
            got = np.asarray(ours[function][name], dtype=float)
            if got.shape != want.shape:
                failures.append(f'state {k} {name}: shape {got.shape}, SPART {want.shape}')
                continue
            err = rel_err(got, want)
            n_checked += 1
            if not err <= TOL:
                failures.append(f'state {k} {name}: relative error {err:.3e}')
    assert not failures, f'{model} {function} differs from SPART:\n' + '\n'.join(failures)
    assert n_checked == len(ref['states']) * len(shapes)


@pytest.mark.parametrize('model', REF_MODELS)
def test_model_matches_spart(model):
    """urdf2robot: numbering, names, types, axes, masses, inertias, transforms, connectivity."""
    ref = reference(model)['robot']
    shapes = reference(model)['shapes']['robot']
    robot, keys = model_robot(model)
    n = robot.n_links_joints

    def arr(k):
        return stored(ref[k], shapes[k]['stored'])

    assert robot.n_q == ref['n_q'] and n == ref['n_links_joints']
    assert robot.link_names == ref['link_names']
    assert robot.joint_names == ref['joint_names']
    assert robot.q_names == ref['q_names']
    assert robot.base_link.mass == pytest.approx(ref['base_mass'])
    np.testing.assert_allclose(robot.base_link.inertia, arr('base_inertia'), atol=1e-12)
    np.testing.assert_array_equal([link.id for link in robot.links], arr('link_id'))
    np.testing.assert_array_equal(
        [link.parent_joint for link in robot.links], arr('link_parent_joint')
    )
    np.testing.assert_allclose(robot.masses, arr('link_mass'))
    np.testing.assert_allclose(
        np.stack([link.inertia for link in robot.links], -1), arr('link_inertia'), atol=1e-12
    )
    np.testing.assert_allclose(
        np.stack([link.T for link in robot.links], -1), arr('link_T'), atol=1e-12
    )
    np.testing.assert_array_equal([j.id for j in robot.joints], arr('joint_id'))
    np.testing.assert_array_equal(robot.joint_type, arr('joint_type'))
    np.testing.assert_array_equal([j.q_id for j in robot.joints], arr('joint_q_id'))
    np.testing.assert_array_equal([j.parent_link for j in robot.joints], arr('joint_parent_link'))
    np.testing.assert_array_equal([j.child_link for j in robot.joints], arr('joint_child_link'))
    np.testing.assert_allclose(
        np.stack([j.axis for j in robot.joints], -1).reshape(3, n), arr('joint_axis'), atol=1e-12
    )
    np.testing.assert_allclose(
        np.stack([j.T for j in robot.joints], -1), arr('joint_T'), atol=1e-12
    )
    branch, child, child_base = spart.ConnectivityMap(robot)
    np.testing.assert_array_equal(branch, arr('con_branch'))
    np.testing.assert_array_equal(child, arr('con_child'))
    np.testing.assert_array_equal(
        np.asarray(child_base).reshape(-1), arr('con_child_base').reshape(-1)
    )
    # robot_keys: name -> SPART id
    assert keys.link_id == {name: k for k, name in enumerate(ref['link_names'])}
    assert keys.joint_id == {name: k + 1 for k, name in enumerate(ref['joint_names'])}
    assert keys.q_id == {name: k + 1 for k, name in enumerate(ref['q_names'])}


@pytest.mark.parametrize('model', REF_MODELS)
def test_inputs_are_consistent(model):
    """R0 in the data is quat_DCM(quat)': checks quat_DCM against SPART's own call."""
    ref = reference(model)
    for s in ref['states']:
        x = inputs_of(ref, s)
        np.testing.assert_allclose(spart.quat_DCM(x['quat']).T, x['R0'], atol=1e-14)
        np.testing.assert_allclose(
            spart.DCM_quat(x['R0'].T) * np.sign(spart.DCM_quat(x['R0'].T)[3]),
            x['quat'] * np.sign(x['quat'][3]),
            atol=1e-12,
        )
