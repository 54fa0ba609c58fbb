"""
A robot packed for the compiled kernels: the constant model (Pinocchio's Model).

:class:`CompiledModel` holds what the kernels of :mod:`spart_ros.native.kernels` read and never
write: the tree ``mi`` (ints) and one row of masses, inertias and frames per body ``mf``
(column layout in :mod:`spart_ros.native.layout`), and the model's gravity.  Each caller of the
kernels brings its own workspace and outputs (Pinocchio's Data: a
:class:`~spart_ros.core.fast.FastDynamics`), so several callers share one model without
overwriting each other's results.
"""

import weakref

import numpy as np

from . import _checks as chk
from .errors import ModelError
from .joint_friction import check_friction_velocity, FRICTION_VELOCITY, joint_dynamics_arrays
from .model import FIXED
from ..native import layout as L


def pack(robot, joint_dynamics=False, friction_velocity=FRICTION_VELOCITY):
    """
    Return (mi, mf) of a numeric robot (see :mod:`spart_ros.native.layout`).

    ModelError if symbolic or if a value is not finite. ``joint_dynamics``: the kernels add the
    joints' damping, friction and armature (:mod:`spart_ros.core.joint_friction`, smoothing
    ``friction_velocity``).
    """
    if robot.symbolic:
        raise ModelError(
            f'robot {robot.name!r} is symbolic: the fast path needs numeric masses and transforms'
        )
    n = robot.n_links_joints
    mi = np.zeros(3 + 3 * n, dtype=np.int64)
    mi[0], mi[1] = n, robot.n_q
    mi[2 + 3 * n] = 1 if joint_dynamics else 0
    mf = np.zeros((n + 1, L.MF_COLS))
    mf[0, L.MASS] = robot.base_link.mass
    mf[0, L.IBODY : L.IBODY + 9] = np.asarray(robot.base_link.inertia, float).ravel()
    for i, (link, joint) in enumerate(zip(robot.links, robot.joints), start=1):
        mi[2 + 3 * (i - 1) : 5 + 3 * (i - 1)] = (
            joint.parent_link,
            joint.type,
            joint.q_id - 1 if joint.type != FIXED else -1,
        )
        mf[i, L.MASS] = link.mass
        mf[i, L.IBODY : L.IBODY + 9] = np.asarray(link.inertia, float).ravel()
        TJ, TL = np.asarray(joint.T, float), np.asarray(link.T, float)
        mf[i, L.TJR : L.TJR + 9] = TJ[:3, :3].ravel()
        mf[i, L.TJP : L.TJP + 3] = TJ[:3, 3]
        mf[i, L.TLR : L.TLR + 9] = TL[:3, :3].ravel()
        mf[i, L.TLP : L.TLP + 3] = TL[:3, 3]
        mf[i, L.AXIS : L.AXIS + 3] = np.asarray(joint.axis, float)
        mf[i, L.TJR_IDENTITY] = float(np.array_equal(TJ[:3, :3], np.eye(3)))
        mf[i, L.TLR_IDENTITY] = float(np.array_equal(TL[:3, :3], np.eye(3)))
        d = joint.dynamics
        mf[i, L.DAMPING], mf[i, L.FRICTION], mf[i, L.ARMATURE] = d.damping, d.friction, d.armature
        mf[i, L.FRICTION_VELOCITY] = friction_velocity
    bad = np.flatnonzero(~np.all(np.isfinite(mf), axis=1))
    if bad.size:  # a Robot checks its values when built: this one was changed since
        k = int(bad[0])
        part = f'link {robot.link_names[k]!r}' + (
            f' or joint {robot.joint_names[k - 1]!r}' if k else ''
        )
        raise ModelError(
            f'robot {robot.name!r}: {part} holds NaN or infinity (changed after the Robot was '
            'built?)'
        )
    return mi, mf


class CompiledModel:
    """
    The constant model of ``robot`` for the compiled kernels (see the module docstring).

    Attributes: ``robot``, ``n`` links, ``n_q`` joint variables, ``mi``, ``mf`` (never written),
    ``gravity`` (3,), inertial frame [m/s^2] (zero by default: space; change it with
    :meth:`set_gravity`: every workspace on this model then uses the new value, like
    Pinocchio's ``model.gravity``), ``invertible``: which generalized inertia matrices were
    found invertible (floating base, fixed base, base block), so that each is checked once;
    ``joint_dynamics`` (bool): the kernels add the joints' damping, Coulomb friction (smoothed
    with ``friction_velocity``) and armature that the robot declares
    (:mod:`spart_ros.core.joint_friction`; default False: the rigid-body model, SPART's), and
    ``damping``, ``friction``, ``armature`` (n_q,) are those values (zero without it).
    """

    __slots__ = (
        'robot',
        'n',
        'n_q',
        'mi',
        'mf',
        'gravity',
        'invertible',
        'joint_dynamics',
        'friction_velocity',
        'damping',
        'friction',
        'armature',
        '__weakref__',
    )

    def __init__(
        self, robot, gravity=None, joint_dynamics=False, friction_velocity=FRICTION_VELOCITY
    ):
        self.robot = chk.robot(robot)
        self.n, self.n_q = robot.n_links_joints, robot.n_q
        self.joint_dynamics = chk.flag('joint_dynamics', joint_dynamics)
        self.friction_velocity = check_friction_velocity(friction_velocity)
        self.mi, self.mf = pack(robot, self.joint_dynamics, self.friction_velocity)
        #: the joints' declared damping, Coulomb friction, armature (n_q,) each, SPART's joint
        #: order (zero when ``joint_dynamics`` is False: what the kernels add)
        self.damping, self.friction, self.armature = (
            a * float(self.joint_dynamics) for a in joint_dynamics_arrays(robot)
        )
        for a in (self.damping, self.friction, self.armature):
            a.setflags(write=False)
        self.mi.setflags(write=False)
        self.mf.setflags(write=False)
        self.gravity = np.zeros(3)
        self.invertible = [False, False, False]
        if gravity is not None:
            self.set_gravity(gravity)

    def set_gravity(self, gravity):
        """Set the model's gravity (3,), inertial frame (InputError naming ``gravity`` if bad)."""
        self.gravity[:] = chk.numeric(
            'gravity', chk.vector('gravity', gravity, 3), 'the fast path'
        )

    def __repr__(self):
        return (
            f'<CompiledModel of {self.robot.name!r} n={self.n} n_q={self.n_q}'
            + (' with joint dynamics' if self.joint_dynamics else '')
            + '>'
        )


# the model of each robot the SPART-named functions' compiled paths have seen (built once, kept
# beside the robot, which stays unchanged)
_MODELS = weakref.WeakKeyDictionary()


def packed(robot):
    """
    Return (mi, mf) of a numeric robot, built once per robot.

    The SPART-named functions' float path.
    """
    try:
        model = _MODELS[robot]
    except KeyError:
        model = _MODELS[robot] = CompiledModel(robot)
    return model.mi, model.mf
