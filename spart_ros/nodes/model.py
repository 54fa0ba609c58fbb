"""
One URDF turned into everything the nodes compute (pure Python, no rclpy).

:class:`Model`: twists, Jacobians, centre of mass, forward / inverse dynamics of a robot with
ROS-convention base inputs and outputs, on the compiled fast path
(:class:`spart_ros.core.fast.FastDynamics`); plus the model geometry the nodes need (IMU frame
in the base, leaf links, Jacobian points).

Frames (see docs/conventions.md and spart_ros.core.base_state): b = URDF base link frame
(REP 105 base_link), c = base CoM frame (SPART's base frame). ROS base state: pose (R_b, p_b)
of b in the world, twist (v_b, w_b) of b expressed in b (nav_msgs/Odometry); base
accelerations: classical acceleration of b's origin and angular acceleration, both expressed
in b; base wrench: torque and force at b's origin, both in b.
"""

from collections import namedtuple
from dataclasses import dataclass
from pathlib import Path
import warnings as _warnings

import numpy as np

from .base_estimator import BaseLinkState
from .config import ConfigError, POINT_FRAMES
from .conversions import finite
from ..core import base_state as bs
from ..core.connectivity import leaf_links
from ..core.errors import InputError, MimicJointWarning, ModelError, SpartError
from ..core.fast.mimic import fast_dynamics
from ..core.invertibility import singularity
from ..core.link_frames import fixed_frame_in_base, link_com_frame
from ..core.ros2_control import ros2_control_from_urdf
from ..core.urdf import robot_from_urdf

__all__ = [
    'Model',
    'IKOutcome',
    'JacobianSpec',
    'jacobian_specs',
    'imu_rotation_in_base',
    'link_com_frame',
    'leaf_links',
    'base_twist_map',
    'ROW_NAMES',
    'BASE_COLUMN_NAMES',
]

ROW_NAMES = ('wx', 'wy', 'wz', 'vx', 'vy', 'vz')
#: Jacobian base-DoF column names. 'ros': the base link twist [w_b; v_b] expressed in b
#: (nav_msgs/Odometry twist, angular first); 'spart': SPART's u0 = [omega in the base CoM
#: frame c; base CoM velocity in the world frame].
BASE_COLUMN_NAMES = {
    'ros': ('base_wx', 'base_wy', 'base_wz', 'base_vx', 'base_vy', 'base_vz'),
    'spart': ('u0_wx', 'u0_wy', 'u0_wz', 'u0_vx', 'u0_vy', 'u0_vz'),
}


def imu_rotation_in_base(robot, link_name):
    """
    Rotation (3, 3) of the URDF frame of ``link_name`` in the base link frame b.

    The link must be rigidly attached to the base: every joint between them fixed.
    ModelError naming the link (unknown) or the first moving joint in between.
    """
    return fixed_frame_in_base(robot, link_name, 'IMU link')[:3, :3].copy()


def base_twist_map(robot, R_b):
    """
    (6, 6) T with u0 = T @ [w_b; v_b] (SPART u0 from the base link twist in b).

    u0 = [R_bc' w_b; R_b v_b + (R_b w_b) x rho], rho = R_b p_bc.
    """
    Tb = np.asarray(robot.base_link.T, float)
    rho = R_b @ Tb[:3, 3]
    T = np.zeros((6, 6))
    T[0:3, 0:3] = Tb[:3, :3].T
    T[3:6, 0:3] = (
        np.array([[0.0, rho[2], -rho[1]], [-rho[2], 0.0, rho[0]], [rho[1], -rho[0], 0.0]]) @ R_b
    )
    T[3:6, 3:6] = R_b
    return T


def _hardware(source, robot, notes):
    """
    Return the ``<ros2_control>`` tags of the URDF ``source`` (text or path).

    They are checked against ``robot``; a tag that does not fit is left out with a note (the model
    is still usable).
    """
    try:
        text = (
            source if '<' in source else Path(source).read_text(encoding='utf-8', errors='replace')
        )
        if '<ros2_control' not in text:
            return ()
        return tuple(ros2_control_from_urdf(source, robot))
    except (SpartError, OSError) as err:
        notes.append(f'its <ros2_control> tags are ignored: {err}')
        return ()


@dataclass
class JacobianSpec:
    """One configured Jacobian: link, point offset (URDF link frame and CoM frame)."""

    link_name: str
    link_id: int
    offset_link: np.ndarray  # point from the URDF link frame origin, in the link frame
    offset_com: np.ndarray  # the same point from the link CoM, in the link CoM frame


def jacobian_specs(robot, links, offsets, point_frame='link'):
    """
    Return the JacobianSpecs of ``links`` and flattened ``offsets``.

    ``links``: names; None/empty = the leaf links. ``offsets``: 3 per link, or empty = zero, given
    in ``point_frame`` ('link': from the URDF link frame origin, in that frame; 'com': from the
    link CoM, in the CoM frame).
    """
    if point_frame not in POINT_FRAMES:
        raise ConfigError(
            f'jacobian_point_frame must be one of {POINT_FRAMES}, got {point_frame!r}'
        )
    links = list(links) if links else leaf_links(robot)
    offsets = list(offsets) if offsets else [0.0] * (3 * len(links))
    if len(offsets) != 3 * len(links):
        raise ConfigError(
            f'jacobian_offsets has {len(offsets)} numbers; it needs 3 per link of '
            f'jacobian_links ({len(links)} links: {links}), flattened [x, y, z, ...]'
        )
    specs = []
    for k, name in enumerate(links):
        try:
            i = robot.link_index(name)
        except ModelError:
            raise ModelError(
                f'jacobian_links: link {name!r} is not in robot {robot.name!r} '
                f'(links: {robot.link_names})'
            ) from None
        off = finite(f'jacobian_offsets of link {name!r}', offsets[3 * k : 3 * k + 3])
        T = link_com_frame(robot, i)
        if point_frame == 'link':
            off_link, off_com = off, T[:3, :3].T @ (off - T[:3, 3])
        else:
            off_link, off_com = T[:3, :3] @ off + T[:3, 3], off
        specs.append(
            JacobianSpec(name, i, np.ascontiguousarray(off_link), np.ascontiguousarray(off_com))
        )
    return specs


Outputs = namedtuple('Outputs', 'rL tL com jacobians points')
ForwardResult = namedtuple('ForwardResult', 'umdot a_b alpha_b')
InverseResult = namedtuple('InverseResult', 'taum torque_b force_b a_b alpha_b')
IKOutcome = namedtuple('IKOutcome', 'result R_b p_b R p')
IKOutcome.__doc__ = """Model.inverse_kinematics: the core's IKResult, the base link pose (R_b, p_b)
and the end-effector frame (R, p) at the solution, world frame."""


def _c(x):
    return np.ascontiguousarray(x, dtype=float)


class Model:
    """
    A robot model and everything the node derives from it.

    Build with :meth:`from_urdf` (URDF text or file path); raises SpartError (ModelError,
    ConfigError...) naming the problem.  All state inputs are ROS-convention base states
    (:class:`BaseLinkState`) plus qm, um in ``q_names`` order.

    Joint coordinates are the robot's INDEPENDENT ones (``robot.coordinates``): a mimic joint
    follows its leader (q = multiplier * q_leader + offset) and is not a coordinate of its
    own; joint efforts are those of the leaders, a follower's effort reaching its leader
    through an ideal transmission (times its multiplier), and Jacobian columns are per
    leader.  Without mimic joints these are SPART's joint variables.  ``warnings``: what
    loading the URDF warned about (massless links, impossible inertias...), as text.
    ``hardware``: the URDF's ``<ros2_control>`` tags
    (:class:`~spart_ros.core.ros2_control.HardwareComponent`; a controller's default joints).
    """

    def __init__(self, robot, config, warnings=(), hardware=()):
        self.config = config.check()
        self.robot = robot
        self.warnings = list(warnings)
        self.hardware = tuple(hardware)
        self.floating = config.base == 'floating'
        self.q_names = list(robot.coordinates.names)
        self.followers = dict(
            robot.coordinates.followers
        )  # mimic joint -> Mimic(leader, multiplier, offset)
        self.link_names = list(robot.link_names)
        self.n_q = len(self.q_names)
        self.total_mass = float(robot.total_mass)
        self.specs = (
            jacobian_specs(
                robot, config.jacobian_links, config.jacobian_offsets, config.jacobian_point_frame
            )
            if config.jacobians
            else []
        )
        self.base_columns = config.jacobian_base_columns
        base_cols = list(BASE_COLUMN_NAMES[self.base_columns]) if self.floating else []
        self.column_names = base_cols + self.q_names
        self.row_names = list(ROW_NAMES)
        self._imu_rotations = {}
        self._frames_in_base = {
            robot.base_link.name: None
        }  # frame name -> (4, 4) pose in b, None = b
        if config.imu_link:
            self.imu_rotation(config.imu_link)
        self.fast = fast_dynamics(robot, joint_dynamics=config.joint_dynamics)
        self._R_bc = _c(np.asarray(robot.base_link.T, float)[:3, :3])
        self._p_bc = _c(np.asarray(robot.base_link.T, float)[:3, 3])
        self._zero6 = np.zeros(6)
        self._T = np.zeros((6, 6))  # base_twist_map(), refilled in place by outputs()
        self._T[0:3, 0:3] = self._R_bc.T
        self._tw = np.zeros(6)
        self._zero_q = np.zeros(self.n_q)
        self.warm_up()

    def imu_rotation(self, link_name):
        """
        Rotation of the URDF frame ``link_name`` in the base link frame (cached).

        ModelError if the link is unknown or not rigidly attached to the base.
        """
        R = self._imu_rotations.get(link_name)
        if R is None:
            R = self._imu_rotations[link_name] = imu_rotation_in_base(self.robot, link_name)
        return R

    def frame_in_base(self, frame, what='frame'):
        """
        (4, 4) pose of the URDF frame ``frame`` in the base link frame b (cached).

        None for b itself; ModelError naming ``what`` and the frame if it is not a link of the
        robot or not rigidly attached to the base.
        """
        try:
            return self._frames_in_base[frame]
        except KeyError:
            T = self._frames_in_base[frame] = fixed_frame_in_base(self.robot, frame, what)
            return T

    @classmethod
    def from_urdf(cls, source, config, expand_xacro=True):
        """
        Model from URDF text.

        Or a file path when ``source`` has no '<'; .xacro expanded unless ``expand_xacro`` is
        false: then xacro text is refused, naming the problem. The loader's warnings are collected
        in ``warnings`` (nothing is printed), plus one when the base mode disagrees with what the
        URDF says or forward dynamics will be refused.
        """
        if not isinstance(source, str) or not source.strip():
            raise ModelError('the robot description is empty')
        if config.actuators_file:  # the arm model: the reaction wheels locked into the base
            from ..core.actuators import load_actuators, lock_wheels

            source = lock_wheels(
                source, load_actuators(config.actuators_file), expand_xacro=expand_xacro
            )
        with _warnings.catch_warnings(record=True) as caught:
            _warnings.simplefilter('always')
            robot, _ = robot_from_urdf(
                source,
                strict=config.strict,
                expand_xacro=expand_xacro,
                joint_dynamics=config.joint_dynamics_file or None,
            )
        notes = [str(w.message) for w in caught if not issubclass(w.category, MimicJointWarning)]
        floating = config.base == 'floating'
        if robot.base_hint and robot.base_hint != config.base:
            notes.append(
                f'the URDF joins {robot.base_link.name!r} to {robot.world_link or "world"!r} with '
                f'a {robot.base_hint} joint, but the node models a {config.base} base (parameter '
                'base)'
            )
        why = singularity(robot, floating, independent=True)
        if why:
            notes.append(
                f'forward dynamics will be refused ({why}); kinematics, Jacobians and inverse '
                'dynamics work'
            )
        return cls(robot, config, notes, _hardware(source, robot, notes))

    def summary(self):
        """One line: links, moving joints, total mass, base mode."""
        r = self.robot
        mimic = (
            f' (+ {len(self.followers)} mimic: '
            + ', '.join(
                f'{f} = {m.multiplier:g} * {m.leader} + {m.offset:g}'
                for f, m in self.followers.items()
            )
            + ')'
            if self.followers
            else ''
        )
        return (
            f'model {r.name!r}: {r.n_links_joints + 1} links (base {r.base_link.name!r}), '
            f'{self.n_q} moving joints{mimic}, total mass {self.total_mass:.6g} kg, base '
            f'{self.config.base}'
            + (f'; Jacobians of {[s.link_name for s in self.specs]}' if self.specs else '')
        )

    def warm_up(self):
        """
        Call every fast-path kernel once (numba compiles or loads them from its cache).

        That the first real message is not delayed.
        """
        base = BaseLinkState(np.eye(3), np.zeros(3), np.zeros(3), np.zeros(3))
        q = self._zero_q
        self.outputs(base, q, q)
        try:
            g = np.zeros(3)
            self.forward_dynamics(
                base,
                q,
                q,
                q,
                np.zeros(3),
                np.zeros(3),
                np.zeros(6),
                np.zeros((6, self.robot.n_links_joints)),
                g,
            )
            self.inverse_dynamics(
                base,
                q,
                q,
                q,
                np.zeros(3),
                np.zeros(3),
                np.zeros(6),
                np.zeros((6, self.robot.n_links_joints)),
                g,
                floating_base=self.floating,
            )
        except SpartError:
            pass

    # -- base conversions -------------------------------------------------------------
    def spart_base(self, base):
        """(R0, r0, u0) of a ROS base state (zero twist for a fixed base)."""
        if self.floating:
            R0, r0, u0 = bs.base_from_link_frame(
                self.robot, base.R_b, base.p_b, base.v_b, base.w_b
            )
        else:
            R0, r0, u0 = bs.base_from_link_frame(self.robot, base.R_b, base.p_b)
        return _c(R0), _c(r0), _c(u0)

    # -- outputs for the topics ---------------------------------------------------------
    def outputs(self, base, qm, um):
        """
        Return the topics' outputs: CoM positions, twists, system CoM, Jacobians.

        CoM positions rL (3, n+1), twists tL (6, n+1) (base first), system CoM [r; v] (6,), and for
        each JacobianSpec the Jacobian (6, len(column_names)) and the point's world position (3,).
        Copies, safe to keep.
        """
        # hot path: the same exact conversion as spart_base (base_state.base_from_link_frame),
        # through the linear map u0 = T [w_b; v_b] that the Jacobian columns need anyway
        R_b = _c(base.R_b)
        R0 = R_b @ self._R_bc
        rho = R_b @ self._p_bc
        r0 = base.p_b + rho
        if self.floating:
            T = self._T
            T[3:6, 0:3] = (
                np.array([[0.0, rho[2], -rho[1]], [-rho[2], 0.0, rho[0]], [rho[1], -rho[0], 0.0]])
                @ R_b
            )
            T[3:6, 3:6] = R_b
            tw = self._tw
            tw[0:3], tw[3:6] = base.w_b, base.v_b
            u0 = T @ tw
            if self.base_columns != 'ros':
                T = None
        else:
            T, u0 = None, self._zero6
        qm, um = _c(qm), _c(um)
        fast = self.fast
        rL, tL, com = (a.copy() for a in fast.twists(R0, r0, qm, u0, um, floating=self.floating))
        jacobians, points = [], []
        for spec in self.specs:
            J, _ = fast.jacobian(
                spec.link_id,
                R0,
                r0,
                qm,
                u0,
                um,
                offset=spec.offset_com,
                floating=self.floating,
                bias=False,
            )
            # SPART: J0 = [I 0; [r0 - rp]x I] P0 for a point rp on any link, so the point is
            # rp = r0 - vee(J[3:6, 0:3] R0')
            S = J[3:6, 0:3] @ R0.T
            points.append(
                r0 - 0.5 * np.array([S[2, 1] - S[1, 2], S[0, 2] - S[2, 0], S[1, 0] - S[0, 1]])
            )
            if not self.floating:
                jacobians.append(J[:, 6:].copy())
            elif T is not None:
                Jo = np.empty_like(J)
                Jo[:, :6] = J[:, :6] @ T
                Jo[:, 6:] = J[:, 6:]
                jacobians.append(Jo)
            else:
                jacobians.append(J.copy())
        return Outputs(rL, tL, com, jacobians, points)

    # -- services -----------------------------------------------------------------------
    def _base_wrench_tau0(self, R0, torque_b, force_b):
        return _c(
            bs.link_frame_wrench_to_base_generalized_force(self.robot, R0, torque_b, force_b)
        )

    def forward_dynamics(self, base, qm, um, taum, torque_b, force_b, wF0, wFm, gravity):
        """
        Return the joint accelerations and the base link's accelerations a_b, alpha_b.

        a_b: the classical acceleration, alpha_b: the angular acceleration, both in b; zero for a
        fixed base. Under joint efforts ``taum``, the base wrench (torque_b, force_b at b's origin,
        in b), external wrenches wF0 (6,), wFm (6, n) ([torque; force] at CoMs, world) and gravity
        (3,).
        """
        R0, r0, u0 = self.spart_base(base)
        tau0 = self._base_wrench_tau0(R0, torque_b, force_b)
        u0dot, umdot = self.fast.forward_dynamics(
            R0,
            r0,
            _c(qm),
            u0,
            _c(um),
            tau0,
            _c(taum),
            wF0=_c(wF0),
            wFm=_c(wFm),
            gravity=_c(gravity),
            floating=self.floating,
        )
        u0dot, umdot = u0dot.copy(), umdot.copy()
        if self.floating:
            a_b, alpha_b = bs.link_frame_acceleration_from_base(self.robot, R0, u0, u0dot)
        else:
            a_b, alpha_b = np.zeros(3), np.zeros(3)
        return ForwardResult(umdot, a_b, alpha_b)

    def inverse_kinematics(
        self,
        base,
        q_seed,
        link,
        point,
        position,
        rotation,
        rows=None,
        frame='world',
        base_free=False,
        tol_rotation=1e-6,
        tol_position=1e-6,
        max_iterations=100,
    ):
        """
        Solve for the joint positions putting ``point`` (3,) of ``link`` at a target pose.

        Joint positions in q_names order; ``point`` in the link's URDF frame, put at ``position``
        (3,) with the link's axes at ``rotation`` (3, 3), world frame, from the seed ``q_seed`` and
        the base state ``base`` (see spart_ros.core.inverse_kinematics): ``base_free`` (floating
        base only) lets the base react at zero momentum, else it is held. Returns an
        :data:`IKOutcome`.
        """
        from ..core.inverse_kinematics import InverseKinematics

        if base_free and not self.floating:
            raise InputError(
                'base_free is true but the node models a fixed base (parameter base: fixed)'
            )
        R0, r0, _ = self.spart_base(base)
        ik = InverseKinematics(
            self.robot, link, point, 'free' if base_free else 'fixed', fast=self.fast
        )
        res = ik.solve(
            position,
            _c(q_seed),
            rotation,
            rows,
            frame,
            R0,
            r0,
            tol_rotation,
            tol_position,
            max_iterations,
        )
        R_b, p_b, _, _ = bs.link_frame_from_base(self.robot, res.R0, res.r0)
        R, p = ik.pose(res.q, res.R0, res.r0)
        return IKOutcome(res, R_b, p_b, R, p)

    def inverse_dynamics(
        self, base, qm, um, umdot, a_b, alpha_b, wF0, wFm, gravity, floating_base=False
    ):
        """
        Return the joint efforts and the base wrench realizing the given accelerations.

        The base wrench: torque_b, force_b at b's origin, in b; the accelerations: joint
        accelerations ``umdot`` and the base acceleration (a_b, alpha_b in b). ``floating_base``:
        the base is unactuated (SPART Floating_ID): the base wrench is zero and the base
        acceleration is computed (and returned). A fixed base: a_b, alpha_b are ignored (zero) and
        the base wrench is what the mount carries.
        """
        R0, r0, u0 = self.spart_base(base)
        qm, um, umdot = _c(qm), _c(um), _c(umdot)
        wF0, wFm, g = _c(wF0), _c(wFm), _c(gravity)
        if floating_base:
            if not self.floating:
                raise InputError(
                    'floating_base is true but the node models a fixed base (parameter base: '
                    'fixed)'
                )
            taum, u0dot = self.fast.floating_inverse_dynamics(
                R0, r0, qm, u0, um, umdot, wF0=wF0, wFm=wFm, gravity=g
            )
            taum, u0dot = taum.copy(), u0dot.copy()
            a_b, alpha_b = bs.link_frame_acceleration_from_base(self.robot, R0, u0, u0dot)
            return InverseResult(taum, np.zeros(3), np.zeros(3), a_b, alpha_b)
        if self.floating:
            u0dot = _c(
                bs.base_acceleration_from_link_frame(self.robot, base.R_b, base.w_b, a_b, alpha_b)
            )
        else:
            u0dot = np.zeros(6)
            a_b, alpha_b = np.zeros(3), np.zeros(3)
        tau0, taum = self.fast.inverse_dynamics(
            R0, r0, qm, u0, um, u0dot, umdot, wF0=wF0, wFm=wFm, gravity=g, floating=self.floating
        )
        tau0, taum = tau0.copy(), taum.copy()
        torque_b, force_b = bs.base_generalized_force_to_link_frame(self.robot, R0, tau0)
        return InverseResult(
            taum, torque_b, force_b, np.asarray(a_b, float), np.asarray(alpha_b, float)
        )
