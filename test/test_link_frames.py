"""
URDF link frames.

spart_ros.core.link_frames: what robot_state_publisher publishes and the 3D replay writes) against
Pinocchio's forward kinematics on the real-world URDF corpus of test_urdf_corpus.py: for every file
both load, at a random joint state, the pose of every link's URDF frame in the base link frame
equals Pinocchio's body frame placement (fixed base: its world is the root link) to 1e-12 (1e-10
relative to the link's distance from the base.
"""

import warnings

import numpy as np
import pinocchio as pin
from pinocchio_oracle import PinocchioOracle
import pytest
from spart_ros.core.link_frames import joint_transforms, link_poses
from spart_ros.core.urdf import robot_from_urdf
from test_urdf_corpus import CORPUS, pinocchio_loads, pinocchio_text, without_world


def _loadable():
    out = []
    for label, path in CORPUS:
        if not pinocchio_loads(path):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            try:
                robot, _ = robot_from_urdf(path)
            except Exception:  # noqa: BLE001 (test_urdf_corpus.py checks what spart_ros refuses)
                continue
        if robot.n_links_joints:
            out.append((label, path, robot))
    return out


LOADABLE = _loadable()


def test_the_corpus_has_robots_with_moving_and_fixed_joints():
    assert len(LOADABLE) >= 20
    assert any(r.n_q >= 6 for _, _, r in LOADABLE) and any(
        r.n_q < r.n_links_joints for _, _, r in LOADABLE
    )
    assert any(r.mimic for _, _, r in LOADABLE)


@pytest.mark.parametrize('label, path, robot', LOADABLE, ids=[label for label, _, _ in LOADABLE])
def test_link_frames_equal_pinocchio(label, path, robot):
    oracle = PinocchioOracle(
        without_world(pinocchio_text(path), robot), robot.q_names, floating=False
    )
    rng = np.random.default_rng(len(label))
    q = rng.uniform(-1.5, 1.5, robot.n_q)
    model, data = oracle.model, oracle.data
    pin.forwardKinematics(model, data, oracle.q(np.eye(3), np.zeros(3), q))
    pin.updateFramePlacements(model, data)
    poses = link_poses(robot, q)
    assert set(poses) == set(robot.link_names)
    for name, T in poses.items():
        placement = data.oMf[model.getFrameId(name, pin.BODY)]
        scale = max(1.0, float(np.linalg.norm(placement.translation)))
        np.testing.assert_allclose(T[:3, :3], placement.rotation, rtol=0, atol=1e-12, err_msg=name)
        np.testing.assert_allclose(
            T[:3, 3], placement.translation, rtol=0, atol=1e-10 * scale, err_msg=name
        )
    # the transforms robot_state_publisher publishes chain to the same poses
    assert len(joint_transforms(robot, q, fixed=False)) == robot.n_q
    assert len(joint_transforms(robot, q, moving=False)) == robot.n_links_joints - robot.n_q
