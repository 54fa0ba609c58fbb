"""
spart_ros.core against an independent implementation: Pinocchio.

Pinocchio (free-flyer root, or fixed base) is built from the same URDF text
and its results are mapped to SPART's coordinates by test/pinocchio_oracle.py
(H = T'MT, C u = T'(M Tdot u + b), tau = T' tau_pin, FD through aba).
Compared to 1e-9 relative (max-norm of the difference / max-norm of
Pinocchio's value) on random states with fixed seeds: H, C u, ID (no gravity,
gravity, external wrenches), FD (same), Floating_ID, per-link poses, twists
and twist rates, point Jacobians and their derivatives, NOC/NOCdot with
GIM_NOC/CIM_NOC, the system centre of mass; fixed base: Hm and ID's taum vs
crba/rnea (with Pinocchio's own default gravity too).

Robots: SPART's kuka_iiwa (massless base with an inertial offset), SC_3DoF
(fixed joints at the base and the tip), Simple_Spacecraft (no moving joint),
and test/data/urdf: branched_two_arm_spacecraft (branches below the base,
base inertial offset + rpy, prismatic and continuous joints, a massive link
on a fixed joint mid-chain), arm7_floating, prismatic_chain, and a copy of the
branched robot with joints renamed so that Pinocchio's (alphabetical) order of
sibling subtrees differs from SPART's (file) order.

Run as a script (python test/test_core_pinocchio.py) to print the max relative
error per quantity per robot.
"""

import os
import sys
import warnings

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
if os.path.dirname(HERE) not in sys.path:
    sys.path.insert(0, os.path.dirname(HERE))

import numpy as np  # noqa: E402
import pinocchio as pin  # noqa: E402  (a test dependency, pinned in requirements.txt)
from pinocchio_oracle import PinocchioOracle  # noqa: E402
import pytest  # noqa: E402
from spart_ros import spart  # noqa: E402

RTOL = 1e-9
SEEDS = (11, 12, 13)

SPART_URDF = os.path.join(HERE, 'data', 'spart', 'urdf')
TEST_URDF = os.path.join(HERE, 'data', 'urdf')
ROBOT_FILES = {
    'kuka_iiwa': os.path.join(SPART_URDF, 'kuka_iiwa.urdf'),
    'SC_3DoF': os.path.join(SPART_URDF, 'SC_3DoF.urdf'),
    'Simple_Spacecraft': os.path.join(SPART_URDF, 'Simple_Spacecraft.urdf'),
    'branched_two_arm_spacecraft': os.path.join(TEST_URDF, 'branched_two_arm_spacecraft.urdf'),
    'arm7_floating': os.path.join(TEST_URDF, 'arm7_floating.urdf'),
    'prismatic_chain': os.path.join(TEST_URDF, 'prismatic_chain.urdf'),
}
# Joint renames that make Pinocchio's name-sorted sibling order differ from the file order:
# arm b ('b_shoulder' -> 'a0_shoulder') now sorts before arm a, and the right finger
# ('a_finger_right_joint' -> 'a_finger_a_right') before the left one.
RENAMED = (
    'branched_renamed',
    'branched_two_arm_spacecraft',
    {'b_shoulder': 'a0_shoulder', 'a_finger_right_joint': 'a_finger_a_right'},
)
ROBOTS = list(ROBOT_FILES) + [RENAMED[0]]
FIXED_BASE_ROBOTS = ['arm7_floating', 'kuka_iiwa', 'prismatic_chain']


# --- models --------------------------------------------------------------------------------


def _urdf_text(name):
    if name == RENAMED[0]:
        import xml.etree.ElementTree as ET

        root = ET.parse(ROBOT_FILES[RENAMED[1]]).getroot()
        for joint in root.findall('joint'):
            joint.set('name', RENAMED[2].get(joint.get('name'), joint.get('name')))
        return ET.tostring(root, encoding='unicode')
    with open(ROBOT_FILES[name], encoding='utf-8') as f:
        return f.read()


_CACHE = {}


def models(name, floating=True):
    """(spart robot, PinocchioOracle), built once per robot."""
    key = (name, floating)
    if key not in _CACHE:
        text = _urdf_text(name)
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')  # e.g. a joint without <axis>
            robot, _ = spart.urdf2robot(text)
        _CACHE[key] = robot, PinocchioOracle(text, robot.q_names, floating=floating)
    return _CACHE[key]


def random_rotation(rng):
    q = rng.normal(size=4)
    return pin.Quaternion(*(q / np.linalg.norm(q))).toRotationMatrix()  # (w, x, y, z)


class State:
    """A random SPART state and the SPART chain evaluated at it."""

    def __init__(self, robot, seed, fixed_base=False):
        rng = np.random.default_rng(seed)
        n, nq = robot.n_links_joints, robot.n_q
        self.robot = robot
        self.R0 = random_rotation(rng)
        self.r0 = rng.normal(size=3)
        self.qm = rng.uniform(-2.5, 2.5, nq)
        self.um = rng.normal(size=nq)
        self.umdot = rng.normal(size=nq)
        self.u0 = np.zeros(6) if fixed_base else rng.normal(size=6)
        self.u0dot = np.zeros(6) if fixed_base else rng.normal(size=6)
        self.tau0 = rng.normal(size=6) * 10
        self.taum = rng.normal(size=nq) * 5
        self.wF0 = rng.normal(size=6) * 3
        self.wFm = rng.normal(size=(6, n)) * 3
        self.gravity = rng.normal(size=3) * 5
        self.k = spart.Kinematics(self.R0, self.r0, self.qm, robot)
        self.d = spart.DiffKinematics(self.R0, self.r0, self.k.rL, self.k.e, self.k.g, robot)
        Bij, Bi0, P0, pm = self.d
        self.t0, self.tL = spart.Velocities(Bij, Bi0, P0, pm, self.u0, self.um, robot)
        self.I0, self.Im = spart.I_I(self.R0, self.k.RL, robot)
        self.t0dot, self.tLdot = spart.Accelerations(
            self.t0, self.tL, P0, pm, Bi0, Bij, self.u0, self.um, self.u0dot, self.umdot, robot
        )
        self.M0_tilde, self.Mm_tilde = spart.MCB(self.I0, self.Im, Bij, Bi0, robot)
        self.H0, self.H0m, self.Hm = spart.GIM(
            self.M0_tilde, self.Mm_tilde, Bij, Bi0, P0, pm, robot
        )

    @property
    def u(self):
        return np.concatenate([self.u0, self.um])

    def H(self):
        return np.block([[self.H0, self.H0m], [self.H0m.T, self.Hm]])

    def C(self):
        Bij, Bi0, P0, pm = self.d
        C0, C0m, Cm0, Cm = spart.CIM(
            self.t0,
            self.tL,
            self.I0,
            self.Im,
            self.M0_tilde,
            self.Mm_tilde,
            Bij,
            Bi0,
            P0,
            pm,
            self.robot,
        )
        return np.block([[C0, C0m], [Cm0, Cm]])

    def ID(self, gravity=None, wrenches=False):
        Bij, Bi0, P0, pm = self.d
        wF0, wFm = self.wrenches(wrenches)
        kw = {} if gravity is None else {'gravity': gravity}
        tau0, taum = spart.ID(
            wF0,
            wFm,
            self.t0,
            self.tL,
            self.t0dot,
            self.tLdot,
            P0,
            pm,
            self.I0,
            self.Im,
            Bij,
            Bi0,
            self.robot,
            **kw,
        )
        return np.concatenate([tau0, taum])

    def FD(self, gravity=None, wrenches=False):
        Bij, Bi0, P0, pm = self.d
        wF0, wFm = self.wrenches(wrenches)
        kw = {} if gravity is None else {'gravity': gravity}
        u0dot, umdot = spart.FD(
            self.tau0,
            self.taum,
            wF0,
            wFm,
            self.t0,
            self.tL,
            P0,
            pm,
            self.I0,
            self.Im,
            Bij,
            Bi0,
            self.u0,
            self.um,
            self.robot,
            **kw,
        )
        return np.concatenate([u0dot, umdot])

    def wrenches(self, on):
        n = self.robot.n_links_joints
        return (self.wF0, self.wFm) if on else (np.zeros(6), np.zeros((6, n)))

    def wrench_dict(self):
        """Return the same wrenches keyed by link name, for the oracle."""
        names = self.robot.link_names
        out = {names[0]: self.wF0}
        out.update({names[i + 1]: self.wFm[:, i] for i in range(self.robot.n_links_joints)})
        return out


_STATES = {}


def state(name, seed, fixed_base=False):
    key = (name, seed, fixed_base)
    if key not in _STATES:
        _STATES[key] = State(models(name)[0], seed, fixed_base)
    return _STATES[key]


def rel_err(ours, ref, scale=None):
    """``max`` |ours - ref| / max |ref| (or / ``scale`` when the reference is 0 by design)."""
    ours, ref = np.asarray(ours, float), np.asarray(ref, float)
    assert ours.shape == ref.shape, (ours.shape, ref.shape)
    if ref.size == 0:
        return 0.0
    scale = np.abs(ref).max() if scale is None else scale
    return float(np.abs(ours - ref).max() / max(scale, 1e-300))


def assert_rel(ours, ref, what, tol=RTOL, scale=None):
    e = rel_err(ours, ref, scale)
    assert e <= tol, (
        f'{what}: relative error {e:.3e} > {tol:g}\n'
        f'ours={np.asarray(ours)}\npinocchio={np.asarray(ref)}'
    )
    return e


# --- checks: each returns {quantity: (ours, pinocchio[, scale])} for one robot and seed -------


def check_mass_matrix(name, seed):
    robot, o = models(name)
    s = state(name, seed)
    return {'H': (s.H(), o.mass_matrix(s.R0, s.r0, s.qm))}


def check_convective(name, seed):
    robot, o = models(name)
    s = state(name, seed)
    return {'C u': (s.C() @ s.u, o.convective(s.R0, s.r0, s.qm, s.u0, s.um))}


def check_inverse_dynamics(name, seed):
    robot, o = models(name)
    s = state(name, seed)
    args = (s.R0, s.r0, s.qm, s.u0, s.um, s.u0dot, s.umdot)
    return {
        'ID': (s.ID(), o.inverse_dynamics(*args)),
        'ID gravity': (s.ID(gravity=s.gravity), o.inverse_dynamics(*args, gravity=s.gravity)),
        'ID wrenches': (s.ID(wrenches=True), o.inverse_dynamics(*args, wrenches=s.wrench_dict())),
        'ID gravity+wrenches': (
            s.ID(gravity=s.gravity, wrenches=True),
            o.inverse_dynamics(*args, gravity=s.gravity, wrenches=s.wrench_dict()),
        ),
    }


def check_forward_dynamics(name, seed):
    robot, o = models(name)
    s = state(name, seed)
    args = (s.R0, s.r0, s.qm, s.u0, s.um, np.concatenate([s.tau0, s.taum]))
    return {
        'FD': (s.FD(), o.forward_dynamics(*args)),
        'FD gravity': (s.FD(gravity=s.gravity), o.forward_dynamics(*args, gravity=s.gravity)),
        'FD wrenches': (s.FD(wrenches=True), o.forward_dynamics(*args, wrenches=s.wrench_dict())),
        'FD gravity+wrenches': (
            s.FD(gravity=s.gravity, wrenches=True),
            o.forward_dynamics(*args, gravity=s.gravity, wrenches=s.wrench_dict()),
        ),
    }


def check_floating_id(name, seed):
    """Floating_ID (tau0 = 0): Pinocchio's rnea at (u0dot, umdot) must give [0; taum]."""
    robot, o = models(name)
    s = state(name, seed)
    Bij, Bi0, P0, pm = s.d
    taum, u0dot = spart.Floating_ID(
        s.wF0,
        s.wFm,
        s.Mm_tilde,
        s.H0,
        s.t0,
        s.tL,
        P0,
        pm,
        s.I0,
        s.Im,
        Bij,
        Bi0,
        s.u0,
        s.um,
        s.umdot,
        robot,
        gravity=s.gravity,
    )
    tau = o.inverse_dynamics(
        s.R0, s.r0, s.qm, s.u0, s.um, u0dot, s.umdot, gravity=s.gravity, wrenches=s.wrench_dict()
    )
    # the base part must vanish: relative to the base force it cancels (that at u0dot = 0)
    tau_a0 = o.inverse_dynamics(
        s.R0,
        s.r0,
        s.qm,
        s.u0,
        s.um,
        np.zeros(6),
        s.umdot,
        gravity=s.gravity,
        wrenches=s.wrench_dict(),
    )
    return {
        'Floating_ID taum': (taum, tau[6:]),
        'Floating_ID tau0 = 0': (np.zeros(6), tau[0:6], np.abs(tau_a0[0:6]).max()),
    }


def check_link_kinematics(name, seed):
    robot, o = models(name)
    s = state(name, seed)
    kin = o.kinematics(s.R0, s.r0, s.qm, s.u0, s.um, s.u0dot, s.umdot)
    names = robot.link_names[1:]
    base = kin[robot.base_link.name]
    out = {
        'R0 r0 (base CoM frame)': (
            np.concatenate([s.R0.ravel(), s.r0]),
            np.concatenate([base[0].ravel(), base[1]]),
        ),
        't0': (s.t0, base[2]),
        't0dot': (s.t0dot, base[3]),
    }
    if names:
        out['RL'] = (s.k.RL, np.stack([kin[m][0] for m in names], axis=2))
        out['rL'] = (s.k.rL, np.stack([kin[m][1] for m in names], axis=1))
        out['tL'] = (s.tL, np.stack([kin[m][2] for m in names], axis=1))
        out['tLdot'] = (s.tLdot, np.stack([kin[m][3] for m in names], axis=1))
    return out


def check_jacobians(name, seed):
    robot, o = models(name)
    s = state(name, seed)
    rng = np.random.default_rng(seed + 1000)
    _, _, P0, pm = s.d
    ours, ref = [], []
    for i, link in enumerate(robot.link_names):
        c = s.r0 if i == 0 else s.k.rL[:, i - 1]
        rp = c + rng.normal(size=3) * 0.3
        J0p, Jmp = spart.Jacob(rp, s.r0, s.k.rL, P0, pm, i, robot)
        ours.append(np.hstack([J0p, Jmp]))
        ref.append(o.jacobian(s.R0, s.r0, s.qm, link, rp))
    return {'Jacob (every link)': (np.stack(ours), np.stack(ref))}


def check_noc(name, seed):
    """GIM_NOC / CIM_NOC from NOC and NOCdot, and the stacked twists N u."""
    robot, o = models(name)
    s = state(name, seed)
    _, _, P0, pm = s.d
    N = spart.NOC(s.r0, s.k.rL, P0, pm, robot)
    Ndot = spart.NOCdot(s.r0, s.t0, s.k.rL, s.tL, P0, pm, robot)
    kin = o.kinematics(s.R0, s.r0, s.qm, s.u0, s.um, s.u0dot, s.umdot)
    names = robot.link_names
    udot = np.concatenate([s.u0dot, s.umdot])
    return {
        'GIM_NOC': (spart.GIM_NOC(N, s.I0, s.Im, robot), o.mass_matrix(s.R0, s.r0, s.qm)),
        'CIM_NOC u': (
            spart.CIM_NOC(N, Ndot, s.t0, s.tL, s.I0, s.Im, robot) @ s.u,
            o.convective(s.R0, s.r0, s.qm, s.u0, s.um),
        ),
        'NOC u': (N @ s.u, np.concatenate([kin[m][2] for m in names])),
        'NOC udot + NOCdot u': (N @ udot + Ndot @ s.u, np.concatenate([kin[m][3] for m in names])),
    }


def check_jacobian_dot(name, seed):
    """
    Jacob and Jacobdot at a random point of every link.

    J u = point twist, J udot + Jdot u = point twist rate.
    """
    robot, o = models(name)
    s = state(name, seed)
    rng = np.random.default_rng(seed + 2000)
    _, _, P0, pm = s.d
    udot = np.concatenate([s.u0dot, s.umdot])
    tw, twd, ref_tw, ref_twd = [], [], [], []
    for i, link in enumerate(robot.link_names):
        c = s.r0 if i == 0 else s.k.rL[:, i - 1]
        rp = c + rng.normal(size=3) * 0.3
        J = np.hstack(spart.Jacob(rp, s.r0, s.k.rL, P0, pm, i, robot))
        tp = J @ s.u
        Jdot = np.hstack(spart.Jacobdot(rp, tp, s.r0, s.t0, s.k.rL, s.tL, P0, pm, i, robot))
        ref = o.point_motion(s.R0, s.r0, s.qm, s.u0, s.um, s.u0dot, s.umdot, link, rp)
        tw.append(tp)
        twd.append(J @ udot + Jdot @ s.u)
        ref_tw.append(ref[0])
        ref_twd.append(ref[1])
    return {
        'Jacob u (point twists)': (np.stack(tw), np.stack(ref_tw)),
        'Jacob udot + Jacobdot u (point accelerations)': (np.stack(twd), np.stack(ref_twd)),
    }


def check_center_of_mass(name, seed):
    robot, o = models(name)
    s = state(name, seed)
    com, vcom, acom = o.center_of_mass(s.R0, s.r0, s.qm, s.u0, s.um, s.u0dot, s.umdot)
    return {
        'Center_of_Mass': (spart.Center_of_Mass(s.r0, s.k.rL, robot), com),
        'Center_of_Mass (velocities)': (spart.Center_of_Mass(s.t0[3:6], s.tL[3:6], robot), vcom),
        'Center_of_Mass (accelerations)': (
            spart.Center_of_Mass(s.t0dot[3:6], s.tLdot[3:6], robot),
            acom,
        ),
    }


CHECKS = [
    check_mass_matrix,
    check_convective,
    check_inverse_dynamics,
    check_forward_dynamics,
    check_floating_id,
    check_link_kinematics,
    check_jacobians,
    check_noc,
    check_jacobian_dot,
    check_center_of_mass,
]


@pytest.mark.parametrize('check', CHECKS, ids=lambda c: c.__name__[6:])
@pytest.mark.parametrize('name', ROBOTS)
def test_against_pinocchio(name, check):
    for seed in SEEDS:
        for what, pair in check(name, seed).items():
            assert_rel(
                *pair[:2], f'{name} seed {seed}: {what}', scale=pair[2] if len(pair) > 2 else None
            )


# --- fixed base ----------------------------------------------------------------------------


def check_fixed_base(name, seed):
    """
    Pinocchio without a free flyer vs SPART's Hm block, and vs SPART's ID with u0 = u0dot = 0.

    Its taum must be the fixed-base joint torques.
    """
    robot, _ = models(name)
    _, o = models(name, floating=False)
    s = state(name, seed, fixed_base=True)
    args = (s.R0, s.r0, s.qm, s.u0, s.um, s.u0dot, s.umdot)
    out = {
        'Hm (fixed base)': (s.Hm, o.mass_matrix(s.R0, s.r0, s.qm)),
        'ID taum (fixed base)': (s.ID()[6:], o.inverse_dynamics(*args)),
        'ID taum gravity (fixed base)': (
            s.ID(gravity=s.gravity)[6:],
            o.inverse_dynamics(*args, gravity=s.gravity),
        ),
        'ID taum wrenches (fixed base)': (
            s.ID(gravity=s.gravity, wrenches=True)[6:],
            o.inverse_dynamics(*args, gravity=s.gravity, wrenches=s.wrench_dict()),
        ),
    }
    # Pinocchio's own default gravity (-9.81 z, left untouched) with the base link frame at
    # the world origin, i.e. SPART's R0 = R_bc, r0 = p_bc, gravity=[0, 0, -9.81].
    fresh = pin.buildModelFromXML(_pin_text(name))
    assert np.allclose(fresh.gravity.linear, [0, 0, -9.81]) and np.allclose(
        fresh.gravity.angular, 0
    )
    s0 = _state_at(robot, o.R_bc, o.p_bc, s)
    P = o.T(s0.R0)  # fixed base: the joint permutation
    tau_pin = pin.rnea(fresh, fresh.createData(), o.q(s0.R0, s0.r0, s.qm), P @ s.um, P @ s.umdot)
    out['ID taum vs default Pinocchio gravity'] = (s0.ID(gravity=[0, 0, -9.81])[6:], P.T @ tau_pin)
    return out


def _pin_text(name):
    from pinocchio_oracle import prepare_urdf_for_pinocchio

    return prepare_urdf_for_pinocchio(_urdf_text(name))


def _state_at(robot, R0, r0, like):
    """``like`` (a fixed-base State) moved to the base pose (R0, r0)."""
    s = State.__new__(State)
    s.__dict__.update(like.__dict__)
    s.R0, s.r0 = R0, r0
    s.k = spart.Kinematics(R0, r0, s.qm, robot)
    s.d = spart.DiffKinematics(R0, r0, s.k.rL, s.k.e, s.k.g, robot)
    Bij, Bi0, P0, pm = s.d
    s.t0, s.tL = spart.Velocities(Bij, Bi0, P0, pm, s.u0, s.um, robot)
    s.I0, s.Im = spart.I_I(R0, s.k.RL, robot)
    s.t0dot, s.tLdot = spart.Accelerations(
        s.t0, s.tL, P0, pm, Bi0, Bij, s.u0, s.um, s.u0dot, s.umdot, robot
    )
    return s


@pytest.mark.parametrize('name', FIXED_BASE_ROBOTS)
def test_fixed_base_against_pinocchio(name):
    for seed in SEEDS:
        for what, (ours, ref) in check_fixed_base(name, seed).items():
            assert_rel(ours, ref, f'{name} seed {seed}: {what}')


# --- the oracle itself ---------------------------------------------------------------------


def test_renamed_robot_really_reorders_pinocchio():
    """The renamed copy must exercise the quirk: Pinocchio's v order != SPART's q order."""
    robot, o = models(RENAMED[0])
    assert list(o.idx_v) != sorted(o.idx_v), (
        'Pinocchio kept the file order: the rename no longer tests anything'
    )
    robot2, _ = models(RENAMED[1])
    assert robot.n_q == robot2.n_q
    # SPART's numbering follows the file, whatever the names
    assert [
        j.replace('a0_shoulder', 'b_shoulder').replace('a_finger_a_right', 'a_finger_right_joint')
        for j in robot.q_names
    ] == robot2.q_names


def test_oracle_mapping_T_is_consistent():
    """
    T maps SPART's u to Pinocchio's v.

    The base origin velocity and omega agree with SPART's base twist, and d/dt T u matches a finite
    difference along the motion.
    """
    name = 'branched_two_arm_spacecraft'
    robot, o = models(name)
    s = state(name, SEEDS[0])
    v = o.T(s.R0) @ s.u
    R_b, p_b = o.base_pose(s.R0, s.r0)
    omega_world = s.R0 @ s.u0[0:3]
    assert_rel(R_b @ v[3:6], omega_world, 'omega_b')
    assert_rel(R_b @ v[0:3], s.u0[3:6] + np.cross(omega_world, p_b - s.r0), 'v_b')
    # finite difference of T(R0(t)) u(t) with u constant: R0(t) = R0 expm(t [omega0]x)
    h = 1e-6
    Rp = s.R0 @ pin.exp3(s.u0[0:3] * h)
    Rm = s.R0 @ pin.exp3(-s.u0[0:3] * h)
    fd = (o.T(Rp) @ s.u - o.T(Rm) @ s.u) / (2 * h)
    assert_rel(o.Tdot_u(s.R0, s.u), fd, 'Tdot u', tol=1e-7)


# --- script: print the table of max relative errors ------------------------------------------


def main():
    table = {}
    for name in ROBOTS:
        for check in CHECKS:
            for seed in SEEDS:
                for what, pair in check(name, seed).items():
                    key = (name, what)
                    table[key] = max(table.get(key, 0.0), rel_err(*pair))
    for name in FIXED_BASE_ROBOTS:
        for seed in SEEDS:
            for what, (ours, ref) in check_fixed_base(name, seed).items():
                key = (name + ' [fixed base]', what)
                table[key] = max(table.get(key, 0.0), rel_err(ours, ref))
    width = max(len(w) for _, w in table)
    current = None
    for (name, what), e in table.items():
        if name != current:
            current = name
            fixed = name.endswith(' [fixed base]')
            robot, o = models(name.split(' ')[0], floating=not fixed)
            print(
                f'\n{name}  (n = {robot.n_links_joints}, n_q = {robot.n_q}; '
                f'Pinocchio nv = {o.model.nv}, {o.model.njoints - 1} joints'
                f'{"" if fixed else " incl. the free flyer"})'
            )
        print(f'  {what:<{width}}  {e:.2e}{"" if e <= RTOL else "  FAIL"}')
    worst = max(table.values())
    print(f'\nworst relative error: {worst:.2e} (tolerance {RTOL:g})')


if __name__ == '__main__':
    main()
