"""
Both plants' ``hold_command`` is ``set_efforts(command.accept(values))`` in one call.

The compiled path (float64 values) holds the same efforts as the checked numpy path, counts the
command accepted, and refuses what ``accept`` refuses (a wrong length, a NaN) with its error,
nothing changed; values of another type take the numpy path (issue 35: the RK4 plant's tick).
"""

from core_helpers import urdf_path
import numpy as np
import pytest
from spart_ros.core import robot_from_urdf
from spart_ros.sim import CommandRejected, EffortCommand, MujocoPlant
from spart_ros.sim.rigid_body import RigidBodyPlant

SC = urdf_path('SC_3DoF')


@pytest.fixture(scope='module')
def plants():
    robot, _ = robot_from_urdf(SC)
    return {
        'mujoco': MujocoPlant.from_urdf(SC, base='floating', gravity=(0.0, 0.0, 0.0)),
        'rk4': RigidBodyPlant(robot, 'floating', gravity=np.zeros(3)),
    }


@pytest.mark.parametrize('kind', ['mujoco', 'rk4'])
def test_hold_command_is_accept_then_set_efforts(plants, kind):
    plant = plants[kind]
    joints = list(plant.joint_names)
    controller_joints = joints[::-1][:2]  # two joints, another order: the mapping counts
    fast, checked = (EffortCommand(controller_joints, joints) for _ in range(2))
    twin = plants['rk4' if kind == 'mujoco' else 'mujoco']
    values = np.array([1.25, -0.5])
    plant.hold_command(fast, values)
    twin.set_efforts(checked.accept(values))
    expected = np.zeros(len(joints))
    expected[[joints.index(j) for j in controller_joints]] = values
    assert np.array_equal(plant._efforts, expected) and np.array_equal(fast.efforts, expected)
    assert np.array_equal(plant._efforts, twin._efforts) and fast.accepted == 1
    for bad, kind_of in (([1.0, np.nan], 'non-finite'), ([1.0, 2.0, 3.0], 'length')):
        with pytest.raises(CommandRejected) as err:
            plant.hold_command(fast, np.array(bad))
        assert err.value.kind == kind_of
        assert np.array_equal(plant._efforts, expected) and fast.rejected >= 1
    plant.hold_command(fast, [2, 3])  # ints: accept's numpy path
    expected[[joints.index(j) for j in controller_joints]] = (2.0, 3.0)
    assert np.array_equal(plant._efforts, expected) and fast.accepted == 2
    plant.set_efforts(np.zeros(len(joints)))
    twin.set_efforts(np.zeros(len(joints)))
