"""
spart_sim's serialized state messages are the bytes of its message objects.

:class:`spart_ros.nodes.state_messages.SerializedStates` writes the plant's readouts into
serialized templates instead of filling message objects for rclpy to convert.  Proved here:
for the orbital spacecraft (a floating base on a 500 km orbit, 4 wheels, 12 thrusters, some of
them firing), at two states and two stamps, every message (clock, joint states, odometry, IMU,
the wheels' JointState, ThrusterState) deserializes to the message object sim_node builds from
the same readouts (its ``_StateMessages`` and the actuators' fields), field for field and of the
same length, so a subscriber cannot tell the two paths apart (the bytes themselves differ in the
alignment padding, which rclpy's serializer leaves uninitialised).  No node is started.
"""

import os
import warnings

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
URDF = os.path.join(ROOT, 'urdf', 'SC_3DoF.urdf')
YAML = os.path.join(ROOT, 'urdf', 'SC_3DoF.actuators.yaml')


@pytest.fixture(scope='module')
def plant():
    from spart_ros.core.orbit import CircularOrbit
    from spart_ros.sim.plant import InitialState, MujocoPlant

    initial = InitialState(
        {'Joint_1': 0.3, 'Joint_2': 0.4, 'Joint_3': -0.2},
        {'Joint_1': 0.1, 'Joint_2': -0.2, 'Joint_3': 0.05},
        base_angular_velocity=(0.01, -0.02, 0.015),
        base_linear_velocity=(0.01, 0.02, 0.0),
    )
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return MujocoPlant.from_urdf(
            URDF,
            base='floating',
            gravity=(0.0, 0.0, 0.0),
            dt=0.001,
            initial=initial,
            actuators=YAML,
            orbit=CircularOrbit.make(altitude=500e3),
        )


def _objects(plant, msgs, stamp, frame):
    """Return the wheels' and thrusters' message objects as SimActuatorsIO.publish fills them."""
    from sensor_msgs.msg import JointState
    from spart_ros.sim.actuation import wheel_reading

    from spart_interfaces.msg import ThrusterState

    a = plant.actuation
    r = wheel_reading(plant)
    wheels = JointState(name=list(a.actuators.wheel_names))
    wheels.header.stamp, wheels.header.frame_id = stamp, frame
    wheels.position, wheels.velocity = r.positions.tolist(), r.speeds.tolist()
    wheels.effort = r.torques.tolist()
    t = a.thruster_reading()
    thrusters = ThrusterState(name=list(a.actuators.thruster_names))
    thrusters.header.stamp, thrusters.header.frame_id = stamp, frame
    thrusters.commanded, thrusters.force = t.commanded.tolist(), t.forces.tolist()
    thrusters.firing = [bool(x) for x in t.firing]
    thrusters.impulse, thrusters.firings = t.impulse.tolist(), [int(x) for x in t.firings]
    thrusters.propellant_used = float(t.propellant)
    return wheels, thrusters


def test_serialized_states_are_the_message_objects_bytes(plant):
    from rclpy.serialization import deserialize_message, serialize_message
    from spart_ros.nodes.sim_node import _StateMessages
    from spart_ros.nodes.state_messages import SerializedStates

    world, base = 'lvlh', 'Base'
    msgs = _StateMessages(plant, world, base)
    ser = SerializedStates(plant, world, base, serialize_message)
    a = plant.actuation
    n_t = a.n_thrusters
    for k, (time_ns, thrust) in enumerate(((1_500_000_000, 0.0), (7_000_123_456, 1.0))):
        a.set_wheel_torques(np.array([0.01, -0.02, 0.005, 0.0]))
        a.set_thruster_commands(np.where(np.arange(n_t) % 3 == k, thrust, 0.0))
        plant.set_efforts(np.array([0.1, -0.05, 0.02, 0.0, 0.0, 0.0, 0.0]))
        plant.step(25)
        stamp = msgs.stamp(time_ns)
        sec, nanosec = stamp.sec, stamp.nanosec
        msgs.clock.clock = stamp
        thrusters = None
        for got, expected in (
            (ser.clock_bytes(sec, nanosec), msgs.clock),
            (ser.joint_state_bytes(sec, nanosec), msgs.joint_state(stamp)),
            (ser.odometry_bytes(sec, nanosec), msgs.odometry(stamp)),
            (ser.imu_bytes(sec, nanosec), msgs.imu(stamp)),
            *zip(
                (ser.wheels_bytes(sec, nanosec), ser.thrusters_bytes(sec, nanosec)),
                _objects(plant, msgs, stamp, base),
            ),
        ):
            # what a subscriber reads: the fields (the bytes differ in the padding, which the
            # serializer leaves uninitialised)
            assert deserialize_message(got, type(expected)) == expected, type(expected)
            assert len(got) == len(serialize_message(expected))
            thrusters = expected
    assert any(thrusters.firing) and a.thruster_reading().propellant > 0  # the fields moved
