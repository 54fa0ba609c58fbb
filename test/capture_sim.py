"""
Robot + target integrated with the core's forward dynamics: the capture tests' stand-in plant.

Not a plant of spart_ros (those are spart_ros.sim's, where the target is integrated later): the
smallest independent integration that closes the capture loop here.

- the robot: SPART's state (R0, r0, qm, u0, um), RK4 over ``dt`` with the commands held (zero-order
  hold), the base attitude as a unit quaternion; forward dynamics of the core's fast path; the
  base wrench (at b's origin, in b: body-fixed, as wheels and thrusters give it) turned into
  SPART's tau0 at every stage; the wheels ideal (a torque source of bounded norm) with their
  momentum kept (world: what they took from the base);
- the target: :class:`spart_ros.core.target.FreeBody` (its own RK4);
- the attachment: at the grasp the target becomes a payload of the end-effector link where it is
  (:func:`spart_ros.core.payload.attach_payload`, the true relative pose) and the velocities jump
  as :func:`~spart_ros.core.payload.attachment_velocities` says.

``chaser()``: test/data/urdf/arm7_floating.urdf on a 400 kg spacecraft base.
"""

from types import SimpleNamespace

from core_helpers import urdf_path
import numpy as np
from spart_ros.control.capture_phases import DETUMBLE
from spart_ros.core.base_state import (
    link_frame_from_base,
    link_frame_wrench_to_base_generalized_force,
)
from spart_ros.core.fast import FastDynamics
from spart_ros.core.free_body import FreeBody
from spart_ros.core.kinematics import kinematics
from spart_ros.core.momentum import momentum_about
from spart_ros.core.payload import attach_payload, attachment_velocities
from spart_ros.core.target import (
    quaternion_from_rotation,
    rotation_from_quaternion,
    TargetState,
)
from spart_ros.core.urdf import robot_from_urdf

EE = 'arm_tool'
#: a bent posture (the end effector 0.71 m from the first joint), the tool along the base x axis
Q0 = np.array([0.0, 0.4, 0.0, -1.8, 0.0, -0.7, 0.0])


def chaser_urdf():
    """Return the URDF text of arm7_floating on a 400 kg spacecraft base."""
    return (
        open(urdf_path('arm7_floating'))
        .read()
        .replace(
            '<mass value="5"/>\n      <inertia ixx="0.0260417" ixy="0" ixz="0" iyy="0.0260417" '
            'iyz="0" izz="0.0333333"/>',
            '<mass value="400"/>\n      <inertia ixx="60" ixy="0" ixz="0" iyy="70" iyz="0" '
            'izz="80"/>',
        )
    )


def chaser():
    robot, _ = robot_from_urdf(chaser_urdf())
    assert robot.base_link.mass == 400.0
    return robot


def _quat_rate(q, w):
    """Return dq/dt = q (x) [w / 2; 0], w in the body frame (q = [x, y, z, w])."""
    x, y, z, s = q
    return 0.5 * np.array(
        [
            s * w[0] + y * w[2] - z * w[1],
            s * w[1] + z * w[0] - x * w[2],
            s * w[2] + x * w[1] - y * w[0],
            -(x * w[0] + y * w[1] + z * w[2]),
        ]
    )


class CaptureSim:
    """The stand-in plant (module docstring); ``dt`` [s] per :meth:`step`, ``substeps`` RK4."""

    def __init__(
        self, robot, target, q, target_state, dt=0.01, substeps=2, max_torque=2.0, max_force=20.0
    ):
        self.robot = robot
        self.fd = FastDynamics(robot)
        self.target = target
        self.body = FreeBody(target)
        T = np.asarray(robot.base_link.T, dtype=float)
        self.quat = quaternion_from_rotation(T[:3, :3])  # base link frame at the world origin
        self.r0 = T[:3, 3].copy()
        self.qm = np.array(q, dtype=float)
        self.u0, self.um = np.zeros(6), np.zeros(robot.n_q)
        self.target_state = target_state
        self.dt, self.substeps = float(dt), int(substeps)
        self.max_torque, self.max_force = float(max_torque), float(max_force)
        self.t = 0.0
        self.attached = None  # the Attachment once made
        self.wheel_momentum = np.zeros(3)  # world [N m s]: what the wheels took from the base
        self.applied = (np.zeros(3), np.zeros(3))

    @property
    def R0(self):
        return rotation_from_quaternion(self.quat)

    def link_state(self):
        """Return the measured state a controller gets (ROS base convention)."""
        base = link_frame_from_base(self.robot, self.R0, self.r0, self.u0)
        return SimpleNamespace(base=base, q=self.qm.copy(), qd=self.um.copy())

    def _derivative(self, quat, r0, qm, u0, um, taum, torque_b, force_b):
        R0 = rotation_from_quaternion(quat)
        tau0 = link_frame_wrench_to_base_generalized_force(self.robot, R0, torque_b, force_b)
        u0dot, umdot = self.fd.forward_dynamics(R0, r0, qm, u0, um, tau0, taum)
        return _quat_rate(quat, u0[0:3]), u0[3:6].copy(), um.copy(), u0dot.copy(), umdot.copy()

    def step(self, efforts, base_torque=None, base_force=None):
        """Advance ``dt`` with the joint ``efforts`` and the base wrench (b, at b's origin)."""
        taum = np.zeros(self.robot.n_q) if efforts is None else np.asarray(efforts, float)
        tb = np.zeros(3) if base_torque is None else np.asarray(base_torque, float)
        fb = np.zeros(3) if base_force is None else np.asarray(base_force, float)
        n = np.linalg.norm(tb)
        if n > self.max_torque:
            tb = tb * (self.max_torque / n)
        n = np.linalg.norm(fb)
        if n > self.max_force:
            fb = fb * (self.max_force / n)
        self.applied = (tb, fb)
        h = self.dt / self.substeps
        for _ in range(self.substeps):
            R_b_mid = self.R0 @ np.asarray(self.robot.base_link.T, float)[:3, :3].T
            x = (self.quat, self.r0, self.qm, self.u0, self.um)
            k1 = self._derivative(*x, taum, tb, fb)
            k2 = self._derivative(*[a + 0.5 * h * b for a, b in zip(x, k1)], taum, tb, fb)
            k3 = self._derivative(*[a + 0.5 * h * b for a, b in zip(x, k2)], taum, tb, fb)
            k4 = self._derivative(*[a + h * b for a, b in zip(x, k3)], taum, tb, fb)
            new = [a + h / 6 * (b + 2 * c + 2 * d + e) for a, b, c, d, e in zip(x, k1, k2, k3, k4)]
            new[0] = new[0] / np.linalg.norm(new[0])
            self.quat, self.r0, self.qm, self.u0, self.um = new
            R_b_end = self.R0 @ np.asarray(self.robot.base_link.T, float)[:3, :3].T
            self.wheel_momentum -= 0.5 * (R_b_mid + R_b_end) @ tb * h
        if self.attached is None:
            self.target_state = self.body.propagate(self.target_state, self.t, [self.t + self.dt])[
                0
            ]
        self.t += self.dt

    # -- momentum and the attachment ------------------------------------------------------------
    def robot_momentum(self, robot=None, fd=None):
        """[L about the world origin; P] (6,) of the robot (or the model given)."""
        fd = fd or self.fd
        H = fd.mass_matrix(self.R0, self.r0, self.qm)
        h0 = H[0:6, 0:6] @ self.u0 + H[0:6, 6:] @ self.um
        return momentum_about(h0, self.R0, self.r0)

    def momentum(self):
        """Return the momentum of robot + target (about the world origin), world."""
        h = self.robot_momentum()
        if self.attached is None:
            h = h + self.target.momentum(self.target_state)
        return h

    def _link_frame(self, i):
        k = kinematics(self.R0, self.r0, self.qm, self.robot)
        T_c = np.asarray(self.robot.link(i).T, dtype=float)
        R_c = np.asarray(k.RL, float).reshape(3, 3, -1)[:, :, i - 1]
        r_c = np.asarray(k.rL, float).reshape(3, -1)[:, i - 1]
        R_l = R_c @ T_c[:3, :3].T
        return R_l, r_c - R_l @ T_c[:3, 3]

    def attach(self, link=EE, name='payload'):
        """Make the target a payload of ``link`` where it is; return the momentum before, after."""
        before = self.momentum()
        i = self.robot.keys.link_id[link]
        R_l, p_l = self._link_frame(i)
        s = self.target_state
        pose = np.eye(4)
        pose[:3, :3] = R_l.T @ s.R  # the target's CoM frame (l's axes) in the link frame
        pose[:3, 3] = R_l.T @ (s.r - p_l)
        combined = attach_payload(self.robot, i, self.target.mass, self.target.inertia, pose, name)
        twist = np.concatenate([s.R @ s.w, s.v])
        a = attachment_velocities(
            self.robot, combined, self.R0, self.r0, self.qm, self.u0, self.um, twist, name
        )
        self.robot, self.fd = combined, FastDynamics(combined)
        self.u0, self.um = a.u0.copy(), a.um.copy()
        self.attached = a
        return before, self.momentum()


def run(capture, sim, goal, duration, estimate_period=0.05, stop_when_done=True):
    """
    Close the loop for ``duration`` s; return a log (arrays per tick), the momentum at the grasp.

    The estimate is the sim's target state (exact), every ``estimate_period`` s.
    """
    t = sim.t
    capture.set_estimate(sim.target_state, t)
    capture.submit(goal, sim.link_state(), t)
    log = {
        k: []
        for k in (
            't',
            'phase',
            'distance',
            'angle',
            'linear',
            'angular',
            'qd',
            'efforts',
            'base_angle',
            'torque',
            'momentum',
            'wheel_momentum',
            'zero',
        )
    }
    grasp = None
    R_start = sim.R0.copy()
    next_estimate = t + estimate_period
    while sim.t < duration - 1e-9:
        t = sim.t
        if sim.attached is None and t >= next_estimate - 1e-9:
            capture.set_estimate(sim.target_state, t)
            next_estimate += estimate_period
        out = capture.update(sim.link_state(), t)
        if capture.phase == DETUMBLE and sim.attached is None:
            grasp = sim.attach(EE, capture.model.link_names[-1])
        fb = goal.feedback
        log['t'].append(t)
        log['phase'].append(capture.phase)
        log['distance'].append(fb.distance if fb else np.nan)
        log['angle'].append(fb.angle if fb else np.nan)
        log['linear'].append(np.linalg.norm(fb.relative_twist[3:6]) if fb else np.nan)
        log['angular'].append(np.linalg.norm(fb.relative_twist[0:3]) if fb else np.nan)
        log['qd'].append(sim.um.copy())
        log['efforts'].append(np.zeros(sim.robot.n_q) if out.values is None else out.values.copy())
        rot = R_start.T @ sim.R0
        log['base_angle'].append(np.arccos(np.clip((np.trace(rot) - 1) / 2, -1, 1)))
        log['torque'].append(np.zeros(3) if out.base_torque is None else out.base_torque.copy())
        log['momentum'].append(sim.momentum())
        log['wheel_momentum'].append(sim.wheel_momentum.copy())
        log['zero'].append(out.zero)
        sim.step(out.values, out.base_torque, out.base_force)
        if stop_when_done and goal.done:
            break
    return {k: np.array(v) for k, v in log.items()}, grasp


def tumbling_target_state(
    target, robot, q, distance=0.05, rate_deg=3.0, seed=0, speed=0.0, axis=None
):
    """
    Return a target state whose fixture is ``distance`` m from the end effector at q, tumbling.

    At ``rate_deg`` deg/s about a random axis (``seed``) or ``axis`` (in the tool's frame), its CoM
    moving at ``speed`` m/s.
    """
    rng = np.random.default_rng(seed)
    fd = FastDynamics(robot)
    T_bc = np.asarray(robot.base_link.T, float)
    R0, r0 = T_bc[:3, :3], T_bc[:3, 3]
    fd.mass_matrix(R0, r0, np.asarray(q, float))
    i = robot.keys.link_id[EE]
    R_c, d = fd.link_pose(i)
    T_c = np.asarray(robot.link(i).T, float)
    R_e = R_c @ T_c[:3, :3].T
    p_e = r0 + d - R_e @ T_c[:3, 3]
    # the fixture in front of the tool (along its z), facing it
    axis = rng.standard_normal(3) if axis is None else R_e @ np.asarray(axis, float)
    axis /= np.linalg.norm(axis)
    w = np.deg2rad(rate_deg) * axis
    R_f = R_e.copy()
    p_f = p_e + R_e @ np.array([0.0, 0.0, distance])
    F = target.fixture
    R_l = R_f @ F[:3, :3].T
    p_l = p_f - R_l @ F[:3, 3]
    v = speed * rng.standard_normal(3)
    return TargetState(R_l, p_l + R_l @ target.com, v, R_l.T @ w)
