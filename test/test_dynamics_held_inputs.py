"""
spart_dynamics with ``max_rate`` > 0: inputs held as they arrive, read at the output rate.

The node is built in this process (its own context, nothing spun): the subscriptions' callbacks
are given serialized messages as rclpy gives them (``raw=True``), the output timer's callback is
called, the publications are caught.  Checked: one output set per timer tick with a new state,
stamped with the newest joint state; of two sources naming different joints (an arm's first and
last joints) the newest-stamped message of each is applied (an older one arriving later is not);
nothing without a new state; the services' current state reads what is held; the outputs equal
the event-driven node's for the same state.
"""

import contextlib

from core_helpers import urdf_path
import numpy as np
import pytest
from rclpy.serialization import serialize_message
from sensor_msgs.msg import JointState

KUKA = urdf_path('kuka_iiwa')
JOINTS = [f'lbr_iiwa_joint_{k}' for k in range(1, 8)]


@contextlib.contextmanager
def _dynamics_node(**overrides):
    import rclpy
    from rclpy.parameter import Parameter
    from spart_ros.nodes.dynamics_node import DynamicsNode

    context = rclpy.Context()
    rclpy.init(context=context)
    node = None
    try:
        params = {'base': 'fixed', 'urdf_path': KUKA, 'serialized_outputs': False, **overrides}
        node = DynamicsNode(
            context=context,
            namespace='/held',
            parameter_overrides=[Parameter(k, value=v) for k, v in params.items()],
        )
        published = []
        node._pub_twists.publish = lambda msg: published.append(
            (msg.header.stamp.sec, msg.header.stamp.nanosec, np.array(msg.twists[-1].angular.z))
        )
        yield node, published
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.shutdown(context=context)


def _state(names, q, sec, nanosec=0):
    msg = JointState(name=names, position=list(q), velocity=[0.1 * x for x in q])
    msg.header.stamp.sec, msg.header.stamp.nanosec = sec, nanosec
    return serialize_message(msg)


@pytest.fixture(scope='module')
def held():
    with _dynamics_node(max_rate=20.0) as node:
        yield node


def test_one_output_set_per_tick_from_the_newest_state_of_each_source(held):
    node, published = held
    assert node.inputs.held and node._held_timer is not None
    receive = node.inputs.joint_states_sub.callback  # what the executor calls, with the bytes
    arm, wrist = JOINTS[:4], JOINTS[4:]
    receive(_state(arm, [0.1, 0.2, 0.3, 0.4], 10))
    receive(_state(wrist, [0.5, 0.6, 0.7], 10))
    receive(_state(arm, [1.1, 1.2, 1.3, 1.4], 10, 2_000_000))
    receive(_state(wrist, [9.0, 9.0, 9.0], 9))  # older than the wrist's last: not applied
    receive(_state(arm, [2.1, 2.2, 2.3, 2.4], 10, 1_000_000))  # older than the arm's newest
    assert not published  # held: nothing read yet
    node._on_output_timer()
    assert [p[:2] for p in published] == [(10, 2_000_000)]
    expected = [1.1, 1.2, 1.3, 1.4, 0.5, 0.6, 0.7]
    state = node.inputs.state()
    np.testing.assert_array_equal(state.q, expected)
    np.testing.assert_allclose(state.qd, 0.1 * np.array(expected))
    node._on_output_timer()  # no new state: no output set
    assert len(published) == 1
    # the services' current state reads what is held (not the last output set's)
    receive(_state(wrist, [0.0, -0.5, 0.25], 11))
    assert node._current_state({}).q[4:].tolist() == [0.0, -0.5, 0.25]
    node._on_output_timer()  # the state the service read is still published once
    assert [p[:2] for p in published] == [(10, 2_000_000), (11, 0)]


def test_the_outputs_are_the_event_driven_nodes(held):
    node, published = held
    q = [0.3, -0.2, 0.5, 1.0, -0.4, 0.2, 0.1]
    node.inputs.joint_states_sub.callback(_state(JOINTS, q, 20))
    node._on_output_timer()
    with _dynamics_node() as (direct, direct_published):
        assert not direct.inputs.held and direct._held_timer is None
        direct.inputs.joint_states_sub.callback(_state(JOINTS, q, 20))  # computed on arrival
        assert [p[:2] for p in direct_published] == [(20, 0)]
        assert published[-1][:2] == (20, 0)
        np.testing.assert_array_equal(published[-1][2], direct_published[-1][2])
