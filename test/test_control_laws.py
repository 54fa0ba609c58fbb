"""
Effort laws (spart_ros.control.effort_laws) against independent references.

All through the numpy SPART functions (test/dynamics_reference.py), not the fast path:
- computed torque = Modern Robotics' ComputedTorque (the book's UR5-like chain of ch. 11, its
  seed values, and random states), built here as a spart_ros robot;
- floating_base = SPART's Floating_ID of the PD acceleration with the measured base;
- free_flying = SPART's ID with the base acceleration of its own SE(3) PD law (written out here);
- gravity compensation = SPART's ID at rest.
"""

from types import SimpleNamespace

from core_helpers import urdf_path
import dynamics_reference as ref
import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from spart_ros import spart
from spart_ros.control.effort_laws import (
    ComputedTorque,
    FloatingBase,
    FreeFlying,
    Gains,
    GravityCompensation,
)
from spart_ros.control.end_effector import rotation_vector
from spart_ros.control.trajectory import Reference
from spart_ros.core import RobotBuilder
from spart_ros.core.errors import InputError
from spart_ros.core.fast import FastDynamics
from spart_ros.core.model import homogeneous

# Modern Robotics, ComputedTorque's documented example (ch. 11): a UR5-like 3-joint chain
M01 = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0.089159], [0, 0, 0, 1]])
M12 = np.array([[0, 0, 1, 0.28], [0, 1, 0, 0.13585], [-1, 0, 0, 0], [0, 0, 0, 1]])
M23 = np.array([[1, 0, 0, 0], [0, 1, 0, -0.1197], [0, 0, 1, 0.395], [0, 0, 0, 1]])
M34 = np.array([[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0.14225], [0, 0, 0, 1]])
GLIST = [
    np.diag([0.010267, 0.010267, 0.00666, 3.7, 3.7, 3.7]),
    np.diag([0.22689, 0.22689, 0.0151074, 8.393, 8.393, 8.393]),
    np.diag([0.0494433, 0.0494433, 0.004095, 2.275, 2.275, 2.275]),
]
SLIST = np.array([[1, 0, 1, 0, 1, 0], [0, 1, 0, -0.089, 0, 0], [0, 1, 0, -0.089, 0, 0.425]]).T
G = np.array([0.0, 0.0, -9.8])


#: |omega| of each screw axis: the book's example has S1 = (1, 0, 1, 0, 1, 0), a revolute joint
#: about the unit axis (1, 0, 1)/sqrt(2) whose angle is sqrt(2) theta_1 (MatrixExp6 rotates by
#: |omega theta|).  A URDF axis is a unit vector: our coordinate is q = SCALE theta, and the
#: efforts map as tau_theta = SCALE tau_q (virtual work).
SCALE = np.linalg.norm(SLIST[:3], axis=0)


def book_chain():
    """
    Return the book's chain as a spart_ros robot.

    Joint frames on the screw axes (identity orientation in the space frame at home), link i's CoM
    frame = the book's frame {i}.
    """
    b = RobotBuilder('mr_ur5')
    b.add_link('base', mass=1.0, inertia=np.eye(3) * 0.01)
    T_link, parent_frame = np.eye(4), np.eye(4)
    for i, Gi in enumerate(GLIST):
        T_link = T_link @ [M01, M12, M23][i]  # frame {i+1} at home, space frame
        w, v = SLIST[:3, i] / SCALE[i], SLIST[3:, i] / SCALE[i]
        q = np.cross(w, v)  # the point of the axis closest to the origin
        J = homogeneous(np.eye(3), q)  # joint frame, space frame
        b.add_link(f'l{i + 1}', mass=Gi[3, 3], inertia=Gi[:3, :3], com=np.linalg.inv(J) @ T_link)
        b.add_joint(
            f'j{i + 1}',
            'revolute',
            parent='base' if i == 0 else f'l{i}',
            child=f'l{i + 1}',
            origin=np.linalg.inv(parent_frame) @ J,
            axis=w,
        )
        parent_frame = J
    return b.build()


FIXED = SimpleNamespace(R_b=np.eye(3), p_b=np.zeros(3), v_b=np.zeros(3), w_b=np.zeros(3))


def test_computed_torque_equals_modern_robotics():
    import modern_robotics as mr

    robot = book_chain()
    fd = FastDynamics(robot, gravity=G)
    Mlist = np.array([M01, M12, M23, M34])
    kp, ki, kd = 1.3, 1.2, 1.1
    law = ComputedTorque(fd, Gains(3, kp, kd, ki))

    def ours(theta, dtheta, eint, ref_theta):
        """Our law in the book's coordinates (see SCALE)."""
        law.integral[:] = SCALE * eint
        r = Reference(*(SCALE * x for x in ref_theta))
        return SCALE * law.compute(FIXED, SCALE * theta, SCALE * dtheta, r, dt=1.0).efforts

    # the book's example: theta = 0.1, eint = 0.2 each; MR adds e to eint (one unit time step)
    q, qd, eint = np.full(3, 0.1), np.array([0.1, 0.2, 0.3]), np.full(3, 0.2)
    r = (np.ones(3), np.array([2, 1.2, 2]), np.full(3, 0.1))
    tau = ours(q, qd, eint, r)
    np.testing.assert_allclose(tau, [133.00525246, -29.94223324, -3.03276856], atol=1e-7)
    rng = np.random.default_rng(5)
    for _ in range(5):
        q, qd, eint = rng.uniform(-2, 2, 3), rng.standard_normal(3), rng.standard_normal(3) * 0.1
        r = (rng.uniform(-2, 2, 3), rng.standard_normal(3), rng.standard_normal(3))
        expected = mr.ComputedTorque(q, qd, eint, G, Mlist, GLIST, SLIST, *r, kp, ki, kd)
        np.testing.assert_allclose(ours(q, qd, eint, r), expected, rtol=1e-10, atol=1e-9)


def test_integral_is_clamped_and_reset():
    robot = book_chain()
    law = ComputedTorque(
        FastDynamics(robot, gravity=G), Gains(3, 0.0, 0.0, ki=2.0, integral_limit=[0.5, 1.0, 2.0])
    )
    r = Reference(np.full(3, 10.0), np.zeros(3), np.zeros(3))
    for _ in range(100):
        law.compute(FIXED, np.zeros(3), np.zeros(3), r, dt=0.1)
    np.testing.assert_array_equal(law.integral, [0.5, 1.0, 2.0])
    law.compute(FIXED, np.zeros(3), np.zeros(3), r._replace(position=np.full(3, -10.0)), dt=0.1)
    np.testing.assert_allclose(law.integral, [-0.5, 0.0, 1.0])
    law.reset()
    assert not law.integral.any()


def _floating_robot():
    return spart.urdf2robot(urdf_path('branched_two_arm_spacecraft'))[0]


def _state(robot, seed):
    rng = np.random.default_rng(seed)
    base = SimpleNamespace(
        R_b=ref.rot(rng.standard_normal(3), rng.uniform(0, 3)),
        p_b=rng.standard_normal(3),
        v_b=rng.standard_normal(3),
        w_b=rng.standard_normal(3),
    )
    n = robot.n_q
    q, qd = rng.uniform(-1, 1, n), rng.standard_normal(n)
    r = Reference(rng.uniform(-1, 1, n), rng.standard_normal(n), rng.standard_normal(n))
    return base, q, qd, r, rng


def _gains(n, rng):
    return Gains(n, rng.uniform(10, 100, n), rng.uniform(1, 20, n))


def test_floating_base_equals_spart_floating_id():
    robot = _floating_robot()
    g = np.array([0.1, -0.2, -1.0])  # gravity is allowed (e.g. a test rig); zero in orbit
    base, q, qd, r, rng = _state(robot, 6)
    law = FloatingBase(FastDynamics(robot, gravity=g), _gains(robot.n_q, rng))
    out = law.compute(base, q, qd, r, dt=0.01)
    qdd = r.acceleration + law.gains.kd * (r.velocity - qd) + law.gains.kp * (r.position - q)
    taum, a_b, alpha_b = ref.expected_floating_id(
        robot,
        base.R_b,
        base.p_b,
        base.v_b,
        base.w_b,
        q,
        qd,
        qdd,
        np.zeros(6),
        np.zeros((6, robot.n_links_joints)),
        g,
    )
    np.testing.assert_allclose(out.efforts, taum, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(
        out.base_acceleration, np.concatenate([a_b, alpha_b]), rtol=1e-9, atol=1e-9
    )


def test_free_flying_equals_spart_id_with_its_base_law():
    robot = _floating_robot()
    base, q, qd, r, rng = _state(robot, 7)
    bg = (2.0, 3.0, 4.0, 5.0)
    law = FreeFlying(FastDynamics(robot), _gains(robot.n_q, rng), base_gains=bg)
    R_d, p_d = ref.rot([0.3, 1.0, -0.2], 0.8), np.array([0.5, -1.0, 2.0])
    law.set_base_reference(R_d, p_d)
    out = law.compute(base, q, qd, r, dt=0.01)
    qdd = r.acceleration + law.gains.kd * (r.velocity - qd) + law.gains.kp * (r.position - q)
    rotvec = Rotation.from_matrix(base.R_b.T @ R_d).as_rotvec()  # scipy's, not ours
    alpha_b = bg[2] * rotvec - bg[3] * base.w_b
    a_b = bg[0] * base.R_b.T @ (p_d - base.p_b) - bg[1] * base.v_b
    taum, torque_b, force_b = ref.expected_id(
        robot,
        base.R_b,
        base.p_b,
        base.v_b,
        base.w_b,
        q,
        qd,
        qdd,
        a_b,
        alpha_b,
        np.zeros(6),
        np.zeros((6, robot.n_links_joints)),
        np.zeros(3),
    )
    np.testing.assert_allclose(out.efforts, taum, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(out.base_torque, torque_b, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(out.base_force, force_b, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(out.base_acceleration, np.concatenate([a_b, alpha_b]), rtol=1e-12)
    # without a reference it holds the first pose it sees: zero pose error, damping only
    law2 = FreeFlying(FastDynamics(robot), _gains(robot.n_q, rng), base_gains=bg)
    out2 = law2.compute(base, q, qd, r, dt=0.01)
    np.testing.assert_allclose(
        out2.base_acceleration, np.concatenate([-bg[1] * base.v_b, -bg[3] * base.w_b]), atol=1e-12
    )
    # the target is kept through reset() (a halt and resume); cleared (on enable) the next pose is
    # held
    law.reset()
    np.testing.assert_array_equal(
        law.compute(base, q, qd, r, dt=0.01).base_acceleration, out.base_acceleration
    )
    law.clear_base_reference()
    np.testing.assert_allclose(
        law.compute(base, q, qd, r, dt=0.01).base_acceleration,
        np.concatenate([-bg[1] * base.v_b, -bg[3] * base.w_b]),
        atol=1e-12,
    )


def test_gravity_compensation_equals_spart_id_at_rest():
    robot = spart.urdf2robot(urdf_path('kuka_iiwa'))[0]
    g = np.array([0.0, 0.0, -9.81])
    base = SimpleNamespace(
        R_b=ref.rot([1, 0, 0], 0.3),
        p_b=np.array([0.1, 0.2, 0.3]),
        v_b=np.zeros(3),
        w_b=np.zeros(3),
    )
    q = np.random.default_rng(8).uniform(-1, 1, robot.n_q)
    law = GravityCompensation(FastDynamics(robot, gravity=g))
    z = np.zeros(robot.n_q)
    tau = law.compute(
        base, q, np.ones(robot.n_q), Reference(z, z, z), 0.01
    ).efforts  # velocities ignored
    taum, _, _ = ref.expected_id(
        robot,
        base.R_b,
        base.p_b,
        np.zeros(3),
        np.zeros(3),
        q,
        z,
        z,
        np.zeros(3),
        np.zeros(3),
        np.zeros(6),
        np.zeros((6, robot.n_links_joints)),
        g,
        floating=False,
    )
    np.testing.assert_allclose(tau, taum, rtol=1e-9, atol=1e-9)
    assert np.abs(tau).max() > 1.0  # gravity really loads the arm


@pytest.mark.parametrize('angle', [0.0, 1e-8, 0.3, 2.0, np.pi - 1e-9, np.pi])
def test_rotation_vector(angle):
    axis = np.array([0.2, -0.5, 0.8]) / np.linalg.norm([0.2, -0.5, 0.8])
    R = Rotation.from_rotvec(axis * angle).as_matrix()
    got = rotation_vector(R)
    np.testing.assert_allclose(Rotation.from_rotvec(got).as_matrix(), R, atol=1e-7)
    assert abs(np.linalg.norm(got) - angle) < 1e-7


@pytest.mark.parametrize(
    'kwargs, match',
    [
        ({'kp': [1.0, 2.0]}, 'kp: expected one finite value per joint'),
        ({'kp': 1.0, 'kd': float('nan')}, 'kd'),
        ({'kp': -1.0}, '>= 0'),
    ],
)
def test_bad_gains_are_named(kwargs, match):
    kwargs.setdefault('kd', 1.0)
    with pytest.raises(InputError, match=match):
        Gains(3, **kwargs)
