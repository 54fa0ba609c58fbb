"""
Vendor arms with declared joint damping and friction over ROS: spart_sim + spart_controller.

The INSTALLED launch/sim_demo.launch.py with ``urdf_path:=`` (config/demo_robot.yaml: a fixed base
in gravity, computed torque, the default settings of the joint dynamics: the sim applies the
model's damping and friction law, the controller compensates it for the control period) run in
lockstep at 1 kHz (one 1 ms step per command) through scripts/local_launch.py, observed by the
main job's Monitor (closed_loop_helpers.LoopRun), for two vendor files of test/data/urdf/vendor
that declare <dynamics damping friction> on every joint: a UFactory xArm7 (damping 2-10, friction
1; its last joint settles in 0.07 ms) and a Unitree Z1.  Every joint goes 1 rad out (the way its
limits allow) and back over 3 s (a C2 rest-to-rest profile): tracking RMS <= 1e-3 rad against the
trajectory's own function, every joint, no fault, no error line; test_joint_dissipation.py checks
the same bound offline on every such arm of the corpus.
"""

import os

import closed_loop_helpers as check
from closed_loop_helpers import LoopRun, LoopTrajectory
from core_helpers import TEST_DIR
import numpy as np
import pytest

pytestmark = [
    pytest.mark.timeout(300),
    pytest.mark.filterwarnings('ignore::spart_ros.core.errors.SpartWarning'),
    # lockstep, but the monitor records best-effort while the loop runs faster than real time
    pytest.mark.realtime,
]

VENDOR = os.path.join(TEST_DIR, 'data', 'urdf', 'vendor')
LOCKSTEP = {
    'lockstep': True,
    'lockstep_steps': 1,
    'lockstep_republish_period': 0.5,
    'joint_command_topic': '~/joint_commands',
    'state_timeout': 2.0,
}
RMS_BOUND = 1e-3


def _amplitudes(path):
    from test_joint_dissipation import _load, out_and_back

    robot = _load(path)
    return list(robot.coordinates.names), out_and_back(robot)[0][1]


@pytest.mark.parametrize('name', ['xarm7', 'z1'])
def test_vendor_arm_tracks_over_ros(name, tmp_path):
    path = os.path.join(VENDOR, f'{name}.urdf')
    joints, out = _amplitudes(path)
    run = LoopRun(tmp_path, name, f'jd_{name}', joints, LOCKSTEP, urdf_path=path)
    # the arm holds q = 0 from the start: a short approach (the interpolation from the hold)
    run.reference = LoopTrajectory(
        joints, np.zeros(len(joints)), out, np.zeros(len(joints)), 3.0, approach=0.2
    )
    try:
        run.start()
        run.send(run.reference, lead=0.5)
        run.run_until(run.reference.end + 0.2)
        run.stop()
        ref = run.reference
        _, rms, emax, t = check.tracking(run.data, ref, ref.start + ref.approach, until=ref.end)
        print(
            f'\n{name} over ROS (lockstep, 1 kHz): RMS {rms} rad, max {emax} rad, {len(t)} states'
        )
        assert len(t) > 0.5 * ref.duration / 0.001, run.describe()
        assert np.all(rms <= RMS_BOUND), (rms, run.describe())
        faults = [s.state for s in run.statuses() if s.state.startswith('fault')]
        assert not faults, faults[:1]
        assert run.exit_code == 0 and not run.errors_while_running(), run.describe()
    finally:
        run.close()
