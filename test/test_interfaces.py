"""
spart_interfaces: every message and service is generated, importable.

Constructible and serializable through the real rosidl type support.
"""

from geometry_msgs.msg import Point, Twist, Wrench
import pytest
from rclpy.serialization import deserialize_message, serialize_message
import spart_interfaces.msg as M
import spart_interfaces.srv as S

MESSAGES = [
    'LinkTwists',
    'Jacobian',
    'Jacobians',
    'CenterOfMass',
    'LinkWrench',
    'ControllerStatus',
    'EndEffectorGoal',
    'Orbit',
]
SERVICES = ['ForwardDynamics', 'InverseDynamics', 'InverseKinematics']


@pytest.mark.parametrize('name', MESSAGES)
def test_message_round_trip(name):
    cls = getattr(M, name)
    msg = cls()
    assert deserialize_message(serialize_message(msg), cls) == msg


@pytest.mark.parametrize('name', SERVICES)
def test_service_types(name):
    srv = getattr(S, name)
    for cls in (srv.Request, srv.Response):
        msg = cls()
        assert deserialize_message(serialize_message(msg), cls) == msg


def test_jacobian_fields():
    jac = M.Jacobian(
        link_name='link2',
        point=Point(x=0.1),
        rows=6,
        cols=8,
        row_names=['wx', 'wy', 'wz', 'vx', 'vy', 'vz'],
        column_names=[
            'base_wx',
            'base_wy',
            'base_wz',
            'base_vx',
            'base_vy',
            'base_vz',
            'j1',
            'j2',
        ],
        data=[float(i) for i in range(48)],
    )
    jac.header.frame_id = 'world'
    back = deserialize_message(serialize_message(M.Jacobians(jacobians=[jac])), M.Jacobians)
    assert back.jacobians[0] == jac
    assert back.jacobians[0].data[8 * 2 + 3] == 19.0  # row-major (2, 3)


def test_link_twists_and_com_fields():
    lt = M.LinkTwists(
        link_names=['base', 'l1'], com_positions=[Point(), Point(z=1.0)], twists=[Twist(), Twist()]
    )
    assert len(lt.twists) == len(lt.com_positions) == len(lt.link_names)
    com = M.CenterOfMass(total_mass=12.5)
    com.velocity.x = 0.5
    assert deserialize_message(serialize_message(com), M.CenterOfMass) == com


def test_forward_dynamics_request_fields():
    req = S.ForwardDynamics.Request(
        use_current_state=False,
        joint_names=['j1'],
        positions=[0.1],
        velocities=[0.0],
        efforts=[1.0],
        link_wrenches=[M.LinkWrench(link_name='l1', wrench=Wrench())],
    )
    req.base_pose.orientation.w = 1.0
    req.gravity.z = -9.81
    fields = S.ForwardDynamics.Request.get_fields_and_field_types()
    for field in ('base_pose', 'base_twist', 'base_wrench', 'link_wrenches', 'gravity'):
        assert field in fields
    res_fields = S.ForwardDynamics.Response.get_fields_and_field_types()
    assert res_fields['base_acceleration'] == 'geometry_msgs/Accel'
    assert res_fields['accelerations'] == 'sequence<double>'
    assert deserialize_message(serialize_message(req), S.ForwardDynamics.Request) == req


def test_inverse_dynamics_fields():
    req = S.InverseDynamics.Request(
        floating_base=True, joint_names=['j1', 'j2'], accelerations=[0.0, 1.0]
    )
    assert deserialize_message(serialize_message(req), S.InverseDynamics.Request) == req
    fields = S.InverseDynamics.Response.get_fields_and_field_types()
    assert fields['efforts'] == 'sequence<double>'
    assert fields['base_wrench'] == 'geometry_msgs/Wrench'


def test_the_capture_action_matches_the_capture_goal():
    """spart_interfaces/action/Capture: its fields and codes are those of the capture's goal."""
    from dataclasses import fields

    from spart_interfaces.action import Capture
    from spart_ros.control import capture_goal as cg
    from spart_ros.control.grasp import GraspTolerances

    for cls in (Capture.Goal, Capture.Result, Capture.Feedback):
        msg = cls()
        assert deserialize_message(serialize_message(msg), cls) == msg
    codes = {v: k for k, v in cg.RESULT_CODES.items()}
    for name, code in codes.items():
        assert getattr(Capture.Result, name.upper().replace(' ', '_')) == code
    goal = set(Capture.Goal.get_fields_and_field_types())
    tolerances = {f.name for f in fields(GraspTolerances)}
    assert {f'{t}_tolerance' for t in tolerances - {'dwell'}} | {'dwell_time'} <= goal
    timing = {f.name for f in fields(cg.CaptureGoal)} & goal
    assert timing == goal - {f'{t}_tolerance' for t in tolerances} - {'dwell_time'}
    assert timing >= {'target', 'fixture', 'approach_time', 'detumble_timeout', 'standoff'}
    fb = Capture.Feedback(phase='synchronise', distance=0.01, relative_twist=Twist())
    assert deserialize_message(serialize_message(fb), Capture.Feedback) == fb
