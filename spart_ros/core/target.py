"""
A free-flying target: its declaration, its motion as a free rigid body, its predicted motion.

A target (a satellite to service, a piece of debris) is one rigid body with no actuators,
declared by YAML or URDF (:func:`load_target`, :class:`Target`): its mass, its inertia, a
**grapple fixture** frame the robot grasps, and its initial pose and twist.

Frames (each a right-handed orthonormal frame):

- **l**, the target's link frame: the URDF root link frame (or the YAML's ``link`` frame); what
  an odometry of the target reports (REP 105: pose of l, twist of l in l's axes);
- **c**, its body frame: l's axes at the target's centre of mass (``com``, given in l); the
  inertia is about the CoM in l's (= c's) axes;
- **f**, the grapple fixture: fixed in l (``fixture``: the 4x4 pose of f in l);
- the **world**: the frame the plants integrate in (with an orbit, :mod:`.orbit`'s frame N:
  the non-rotating frame falling with the reference point; its readouts are in LVLH).

**State** (:data:`TargetState`, SPART's u0 convention): ``R`` (3, 3) l's axes -> world, ``r``
(3,) the CoM in the world, ``v`` (3,) the CoM's velocity in the world, ``w`` (3,) the angular
velocity in the body axes.

**Dynamics** (:class:`FreeBody`): a torque-free rigid body, with in orbit the tidal force and the
gravity-gradient torque of :class:`~spart_ros.core.orbit.CircularOrbit` (the same loads the
plants apply to every body, :meth:`~spart_ros.core.orbit.CircularOrbit.loads`), and an optional
uniform gravity ``g`` (no orbit)::

    m r'' = m g + f_tidal(t, r)
    I w' + w x (I w) = tau_gg(t, R)            (body axes)
    R' = R [w]x                                  (integrated as a unit quaternion)

Linear orbit model: f_tidal = m n^2 (3 e (e . r) - r), tau_gg = 3 n^2 e_b x (I e_b), e the radial
unit vector (e_b = R' e); nonlinear: the exact point-mass difference (:mod:`.orbit`).

**Prediction** (:class:`FixturePrediction`): from an estimate of the state at a time (a pose and
twist: :meth:`Target.state_from_odometry`), the fixture's pose, twist and acceleration at any
later time, by RK4 with steps of at most ``max_step`` s and ``max_angle`` rad of rotation
(error below 1e-10 of the motion over tens of seconds at the tumble rates of a capture), in the
world frame or, with an orbit, in LVLH.  The integration is scalar Python (no numpy call per
stage): a step costs a few tens of microseconds; the prediction keeps the states it reached, so
that a control loop asking for the next tick's time costs one step.

Twists and accelerations of a frame are [angular; linear of the frame's origin], world axes.
Arguments are checked at the entry (InputError naming the argument and the fix).
"""

from collections import namedtuple
from dataclasses import dataclass, field
import math
import os
import warnings

import numpy as np

from . import checks as chk
from .attitude import rpy_rotation
from .base_state import link_frame_pose
from .errors import InputError, ModelWarning, SpartError
from .kinematics import kinematics
from .model import check_mass_inertia, homogeneous
from .orbit import CircularOrbit
from .rigid_motion import checked_transform
from .urdf import robot_from_urdf

__all__ = [
    'Target',
    'TargetState',
    'FixtureMotion',
    'FreeBody',
    'FixturePrediction',
    'load_target',
    'INITIAL_FRAMES',
    'quaternion_from_rotation',
    'rotation_from_quaternion',
]

#: frames the initial pose of a target may be given in: 'world' (LVLH with an orbit), 'base' (the
#: robot's base link frame at time 0)
INITIAL_FRAMES = ('world', 'base')

TargetState = namedtuple('TargetState', 'R r v w')
TargetState.__doc__ = """A target's state (module docstring): ``R`` (3, 3) l's axes -> world,
``r`` (3,) CoM [m], ``v`` (3,) CoM velocity [m/s], world; ``w`` (3,) angular velocity [rad/s],
body axes."""

FixtureMotion = namedtuple('FixtureMotion', 'R p twist acceleration')
FixtureMotion.__doc__ = """The grapple fixture's motion at one time: ``R`` (3, 3) f -> world,
``p`` (3,) its origin [m]; ``twist`` (6,) [angular velocity; velocity of its origin],
``acceleration`` (6,) [angular acceleration; acceleration of its origin], world axes."""


def _float3(where, value):
    try:
        v = np.array(value, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise InputError(f'{where}: expected 3 numbers, got {chk.given(value)}') from None
    if v.shape != (3,) or not np.all(np.isfinite(v)):
        raise InputError(f'{where}: expected 3 finite numbers, got {chk.given(value)}')
    return v


def _inertia(where, value):
    """Return (3, 3) from 3 principal moments, 6 values (ixx iyy izz ixy ixz iyz), 9, or a dict."""
    if isinstance(value, dict):
        keys = ('ixx', 'iyy', 'izz', 'ixy', 'ixz', 'iyz')
        unknown = sorted(set(value) - set(keys))
        if unknown:
            raise InputError(f'{where}: unknown keys {unknown} (known: {list(keys)})')
        value = [value.get(k, 0.0) for k in keys]
    try:
        a = np.array(value, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise InputError(f'{where}: expected numbers, got {chk.given(value)}') from None
    if not np.all(np.isfinite(a)):
        raise InputError(f'{where}: expected finite numbers, got {chk.given(value)}')
    if a.size == 3:
        return np.diag(a)
    if a.size == 6:
        ixx, iyy, izz, ixy, ixz, iyz = a
        return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    if a.size == 9:
        return a.reshape(3, 3)
    raise InputError(
        f'{where}: expected 3 principal moments, 6 values [ixx, iyy, izz, ixy, ixz, iyz] or a '
        f'3x3 matrix [kg m^2], got {a.size} numbers'
    )


def _pose(where, value):
    """Return the 4x4 pose of {xyz, rpy} (either may be absent)."""
    if value is None:
        return np.eye(4)
    if not isinstance(value, dict):
        raise InputError(f'{where}: expected a mapping with xyz and rpy, got {chk.given(value)}')
    unknown = sorted(set(value) - {'xyz', 'rpy', 'name'})
    if unknown:
        raise InputError(f'{where}: unknown keys {unknown} (known: xyz, rpy)')
    p = _float3(f'{where}.xyz', value.get('xyz', (0.0, 0.0, 0.0)))
    R = rpy_rotation(_float3(f'{where}.rpy', value.get('rpy', (0.0, 0.0, 0.0))))
    return homogeneous(np.asarray(R, dtype=float), p)


def quaternion_from_rotation(R):
    """
    Return the unit quaternion [x, y, z, w] (4,) of the rotation ``R`` (3, 3), w >= 0.

    The active rotation (ROS's and SPART's component order; the transpose of SPART's DCM
    convention: ``quaternion_dcm(q) = R'``).
    """
    R = chk.rotation('R', R)
    return np.array(_quaternion(R.tolist()))


def rotation_from_quaternion(q):
    """Return the rotation (3, 3) of a quaternion ``q`` = [x, y, z, w] (normalized first)."""
    q = chk.vector('q', q, 4)
    n = math.sqrt(float(q @ q))
    if not n > 0:
        raise InputError('q: a zero quaternion is no rotation')
    return np.array(_rotation(*(q / n))).reshape(3, 3)


def _quaternion(R):
    """[x, y, z, w] of a rotation given as nested lists (Shepperd's method), w >= 0."""
    (a, b, c), (d, e, f), (g, h, i) = R
    trace = a + e + i
    if trace > 0:
        s = 2.0 * math.sqrt(1.0 + trace)
        q = [(h - f) / s, (c - g) / s, (d - b) / s, 0.25 * s]
    elif a > e and a > i:
        s = 2.0 * math.sqrt(1.0 + a - e - i)
        q = [0.25 * s, (b + d) / s, (c + g) / s, (h - f) / s]
    elif e > i:
        s = 2.0 * math.sqrt(1.0 + e - a - i)
        q = [(b + d) / s, 0.25 * s, (f + h) / s, (c - g) / s]
    else:
        s = 2.0 * math.sqrt(1.0 + i - a - e)
        q = [(c + g) / s, (f + h) / s, 0.25 * s, (d - b) / s]
    if q[3] < 0:
        q = [-x for x in q]
    n = math.sqrt(sum(x * x for x in q))
    return [x / n for x in q]


def _rotation(x, y, z, w):
    """Return the rotation (9 floats, row-major) of a unit quaternion."""
    return (
        1.0 - 2.0 * (y * y + z * z),
        2.0 * (x * y - z * w),
        2.0 * (x * z + y * w),
        2.0 * (x * y + z * w),
        1.0 - 2.0 * (x * x + z * z),
        2.0 * (y * z - x * w),
        2.0 * (x * z - y * w),
        2.0 * (y * z + x * w),
        1.0 - 2.0 * (x * x + y * y),
    )


@dataclass(frozen=True, eq=False)
class Target:
    """
    A target's declaration (see the module docstring).

    Build it with :meth:`make` or :func:`load_target`.
    ``name``; ``mass`` [kg] (> 0); ``inertia`` (3, 3) [kg m^2] about the CoM in l's axes;
    ``com`` (3,) the CoM in l [m]; ``fixture`` (4, 4) the grapple fixture frame f in l;
    ``fixture_name``; the initial state: ``initial_pose`` (4, 4) l in ``initial_frame`` ('world'
    or 'base', :data:`INITIAL_FRAMES`), ``initial_twist`` (6,) [angular velocity; velocity of l's
    origin] relative to the world (LVLH with an orbit), in ``initial_frame``'s axes; ``source``:
    where it was declared (for messages).
    """

    name: str
    mass: float
    inertia: np.ndarray
    com: np.ndarray
    fixture: np.ndarray
    fixture_name: str = 'grapple_fixture'
    initial_pose: np.ndarray = field(default_factory=lambda: np.eye(4))
    initial_twist: np.ndarray = field(default_factory=lambda: np.zeros(6))
    initial_frame: str = 'world'
    source: str = ''

    @classmethod
    def make(
        cls,
        name='target',
        mass=1.0,
        inertia=(1.0, 1.0, 1.0),
        com=(0.0, 0.0, 0.0),
        fixture=None,
        fixture_name='grapple_fixture',
        initial_pose=None,
        initial_twist=None,
        initial_frame='world',
        source='',
    ):
        """
        Return a checked Target (InputError naming a bad argument and the fix).

        ``name``; ``mass`` [kg]; ``inertia``: 3 principal moments, 6 values [ixx, iyy, izz, ixy,
        ixz, iyz], or (3, 3) [kg m^2]; ``com`` (3,) in l; ``fixture``, ``initial_pose``: 4x4 rigid
        transforms (None: identity); ``fixture_name``; ``initial_twist`` (6,) (None: at rest);
        ``initial_frame``: 'world' or 'base'; ``source``: where it was declared (as the class's
        fields).
        """
        where = source or f'target {name!r}'
        name = str(name)
        mass = chk.scalar(f'{where}: mass', mass)
        if not mass > 0:
            raise InputError(f'{where}: mass must be > 0 kg (a target is a body), got {mass}')
        inertia = _inertia(f'{where}: inertia', inertia)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter('error')
                check_mass_inertia(name, mass, inertia, strict=True)
        except (SpartError, Warning) as err:
            raise InputError(f'{where}: {err}') from None
        if not np.linalg.eigvalsh(inertia)[0] > 0:
            raise InputError(
                f'{where}: the inertia must be positive definite (a free body with a zero '
                'principal moment has no defined rotation), got principal moments '
                f'{np.linalg.eigvalsh(inertia).tolist()}'
            )
        com = _float3(f'{where}: com', com)
        fixture = np.eye(4) if fixture is None else _transform(f'{where}: fixture', fixture)
        pose = (
            np.eye(4)
            if initial_pose is None
            else _transform(f'{where}: initial pose', initial_pose)
        )
        twist = (
            np.zeros(6)
            if initial_twist is None
            else chk.vector(f'{where}: initial twist', initial_twist, 6)
        )
        if initial_frame not in INITIAL_FRAMES:
            raise InputError(
                f'{where}: initial frame: expected one of {list(INITIAL_FRAMES)}, got '
                f'{initial_frame!r}'
            )
        for a in (inertia, com, fixture, pose):
            a.setflags(write=False)
        twist = np.array(twist, dtype=float)
        twist.setflags(write=False)
        return cls(
            name,
            float(mass),
            inertia,
            com,
            fixture,
            str(fixture_name),
            pose,
            twist,
            initial_frame,
            source,
        )

    # -- frames ---------------------------------------------------------------------------------
    @property
    def fixture_in_body(self):
        """Return (R (3, 3), p (3,)): the fixture frame in the body frame c (at the CoM)."""
        return self.fixture[:3, :3], self.fixture[:3, 3] - self.com

    def kinetic_energy(self, state):
        """Return the kinetic energy [J] of ``state`` (a :data:`TargetState`)."""
        w = np.asarray(state.w, dtype=float)
        v = np.asarray(state.v, dtype=float)
        return 0.5 * self.mass * float(v @ v) + 0.5 * float(w @ self.inertia @ w)

    def momentum(self, state, point=None):
        """
        Return [angular momentum about ``point``; linear momentum] (6,), world axes.

        ``state``: a :data:`TargetState`; ``point`` (3,) fixed in the world (default its origin).
        """
        R, r, v, w = (np.asarray(x, dtype=float) for x in state)
        p = self.mass * v
        o = np.zeros(3) if point is None else chk.vector('point', point, 3)
        return np.concatenate([R @ (self.inertia @ w) + np.cross(r - o, p), p])

    def fixture_motion(self, state, acceleration=None):
        """
        Return the :data:`FixtureMotion` of the fixture at ``state``.

        ``acceleration``: (a (3,) the CoM's acceleration, world; alpha (3,) the angular
        acceleration, body axes), e.g. :meth:`FreeBody.accelerations`; None: zero.
        """
        R, r, v, w = (np.asarray(x, dtype=float) for x in state)
        R_cf, p_cf = self.fixture_in_body
        rho = R @ p_cf
        omega = R @ w
        twist = np.concatenate([omega, v + np.cross(omega, rho)])
        acc = np.zeros(6)
        if acceleration is not None:
            a, alpha_b = acceleration
            alpha = R @ np.asarray(alpha_b, dtype=float)
            acc[0:3] = alpha
            acc[3:6] = np.asarray(a, dtype=float) + np.cross(alpha, rho)
        acc[3:6] += np.cross(omega, np.cross(omega, rho))
        return FixtureMotion(R @ R_cf, r + rho, twist, acc)

    # -- odometry and the initial state ---------------------------------------------------------
    def state_from_odometry(self, R_l, p_l, v_l, w_l):
        """
        Return the :data:`TargetState` of an odometry of l (REP 105).

        ``R_l`` (3, 3) l -> world, ``p_l`` (3,) its origin, ``v_l``, ``w_l`` (3,) the velocity of
        that origin and the angular velocity, both in l's axes.
        """
        R = chk.rotation('R_l', R_l)
        p = chk.vector('p_l', p_l, 3)
        v_l = chk.vector('v_l', v_l, 3)
        w = np.array(chk.vector('w_l', w_l, 3), dtype=float)
        return TargetState(
            np.array(R, dtype=float), p + R @ self.com, R @ (v_l + np.cross(w, self.com)), w
        )

    def odometry(self, state):
        """
        Return (R_l, p_l, v_l, w_l): the odometry of l (REP 105) at ``state``.

        The inverse of :meth:`state_from_odometry`.
        """
        R, r, v, w = (np.asarray(x, dtype=float) for x in state)
        return R.copy(), r - R @ self.com, R.T @ v - np.cross(w, self.com), w.copy()

    def initial_state(self, base_pose=None, orbit=None, t=0.0):
        """
        Return the initial :data:`TargetState` in the plants' world frame (N with an orbit).

        ``base_pose``: (R_b (3, 3), p_b (3,)) the robot's base link frame in the world (LVLH with
        an orbit) at time 0, needed when ``initial_frame`` is 'base'; ``orbit``: a
        :class:`~spart_ros.core.orbit.CircularOrbit` (the declaration is then in LVLH, converted
        to N at time ``t``), or None.
        """
        T, twist = self.initial_pose, self.initial_twist
        R, p = T[:3, :3], T[:3, 3]
        w, v = twist[0:3], twist[3:6]
        if self.initial_frame == 'base':
            if base_pose is None:
                raise InputError(
                    f'target {self.name!r}: its initial pose is given in the base frame: the '
                    "robot's initial base pose (base_pose=(R_b, p_b)) is needed"
                )
            R_b = chk.rotation('base_pose rotation', base_pose[0])
            p_b = chk.vector('base_pose position', base_pose[1], 3)
            R, p, w, v = R_b @ R, p_b + R_b @ p, R_b @ w, R_b @ v
        w_l, v_l = R.T @ w, R.T @ v
        if orbit is not None:
            if not isinstance(orbit, CircularOrbit):
                raise InputError(f'orbit: expected a CircularOrbit, got {chk.given(orbit)}')
            R, p, v_l, w_l = orbit.from_lvlh(float(t), R, p, v_l, w_l)
        return self.state_from_odometry(R, p, v_l, w_l)


def _transform(where, T):
    R, p = checked_transform(where, T)
    return homogeneous(np.array(R, dtype=float), np.array(p, dtype=float))


# --- declarations --------------------------------------------------------------------------------
_YAML_KEYS = ('name', 'mass', 'inertia', 'com', 'fixture', 'initial', 'urdf', 'link')
_INITIAL_KEYS = ('frame', 'xyz', 'rpy', 'angular', 'linear')


def load_target(source, fixture=None):
    """
    Return the :class:`Target` declared by ``source``.

    ``source``: a YAML file (``.yaml``/``.yml``) or its parsed content (a dict), a URDF file or
    text, or a Target (returned as it is).  ``fixture``: the fixture link's name in a URDF
    (default: the one link named ``grapple_fixture``, else the one link that is not the root).

    YAML (SI units; the top-level key ``target`` is optional)::

        target:
          name: client                 # default 'target'
          mass: 250.0                  # [kg]
          inertia: [40.0, 55.0, 30.0]  # principal moments, or [ixx, iyy, izz, ixy, ixz, iyz]
          com: [0.0, 0.0, 0.0]         # CoM in the link frame l [m]
          fixture: {name: grapple_fixture, xyz: [0.6, 0.0, 0.0], rpy: [0.0, 0.0, 0.0]}  # f in l
          initial:
            frame: world               # or base (the robot's base link frame at time 0)
            xyz: [1.5, 0.0, 0.2]       # l's origin in that frame [m]
            rpy: [0.0, 0.0, 0.0]
            angular: [0.0, 0.03, 0.05] # [rad/s], relative to the world (LVLH), frame's axes
            linear: [0.0, 0.0, 0.0]    # velocity of l's origin [m/s], likewise

    or ``urdf: path`` (relative to the YAML's folder) with ``fixture: <link name>`` and
    ``initial`` (mass, inertia and fixture then come from the URDF).  A URDF target is one rigid
    body: every joint fixed (their links' masses and inertias are added up), the fixture a link of
    it (usually massless, on a fixed joint); its root link is l.  InputError naming the file and
    the problem.
    """
    if isinstance(source, Target):
        return source
    if isinstance(source, dict):
        return _from_dict(source, '', 'target')
    text = os.fspath(source) if isinstance(source, os.PathLike) else source
    if isinstance(text, str) and text.lower().endswith(('.yaml', '.yml')):
        import yaml

        try:
            with open(text, encoding='utf-8') as f:
                data = yaml.safe_load(f)
        except OSError as err:
            raise InputError(f'target file {text!r}: {err.strerror}') from None
        except yaml.YAMLError as err:
            raise InputError(f'target file {text!r} is not valid YAML: {err}') from None
        return _from_dict(data, os.path.dirname(os.path.abspath(text)), f'target file {text!r}')
    return _from_urdf(source, fixture)


def _from_dict(data, folder, where):
    if isinstance(data, dict) and set(data) == {'target'}:
        data = data['target']
    if not isinstance(data, dict):
        raise InputError(f'{where}: expected a mapping (the target), got {chk.given(data)}')
    unknown = sorted(set(data) - set(_YAML_KEYS))
    if unknown:
        raise InputError(f'{where}: unknown keys {unknown} (known: {list(_YAML_KEYS)})')
    initial = data.get('initial') or {}
    if not isinstance(initial, dict):
        raise InputError(f'{where}: initial: expected a mapping, got {chk.given(initial)}')
    extra = sorted(set(initial) - set(_INITIAL_KEYS))
    if extra:
        raise InputError(f'{where}: initial: unknown keys {extra} (known: {list(_INITIAL_KEYS)})')
    pose = _pose(f'{where}: initial', {k: initial[k] for k in ('xyz', 'rpy') if k in initial})
    twist = np.concatenate(
        [
            _float3(f'{where}: initial.angular', initial.get('angular', (0.0, 0.0, 0.0))),
            _float3(f'{where}: initial.linear', initial.get('linear', (0.0, 0.0, 0.0))),
        ]
    )
    frame = initial.get('frame', 'world')
    if 'urdf' in data:
        clash = sorted(set(data) & {'mass', 'inertia', 'com'})
        if clash:
            raise InputError(
                f'{where}: {clash} come from the URDF when urdf is given: remove them'
            )
        path = os.path.join(folder, str(data['urdf']))
        fixture = data.get('fixture')
        if fixture is not None and not isinstance(fixture, str):
            raise InputError(
                f'{where}: with urdf, fixture is the name of the fixture link, got '
                f'{chk.given(fixture)}'
            )
        body = _from_urdf(path, fixture)
        return Target.make(
            data.get('name', body.name),
            body.mass,
            body.inertia,
            body.com,
            body.fixture,
            body.fixture_name,
            pose,
            twist,
            frame,
            where,
        )
    for key in ('mass', 'inertia'):
        if key not in data:
            raise InputError(f"{where}: {key} is missing (or give urdf: the target's URDF)")
    fixture = data.get('fixture')
    name = 'grapple_fixture'
    if isinstance(fixture, dict):
        name = str(fixture.get('name', name))
    return Target.make(
        data.get('name', 'target'),
        data['mass'],
        data['inertia'],
        data.get('com', (0, 0, 0)),
        _pose(f'{where}: fixture', fixture),
        name,
        pose,
        twist,
        frame,
        where,
    )


def _from_urdf(source, fixture):
    with warnings.catch_warnings():
        warnings.filterwarnings('ignore', message='.*have no <inertial>', category=ModelWarning)
        robot, _ = robot_from_urdf(source)
    label = source if isinstance(source, str) and len(source) < 300 else 'URDF text'
    moving = [j.name for j in robot.joints if j.type != 0]
    if moving:
        raise InputError(
            f'{label}: a target is one rigid body, but joints {moving} move: make them fixed '
            '(or give the target as YAML)'
        )
    names = robot.link_names
    if fixture is None:
        if 'grapple_fixture' in names:
            fixture = 'grapple_fixture'
        elif len(names) == 2:
            fixture = names[1]
        else:
            raise InputError(
                f'{label}: which link is the grapple fixture? Name it (fixture=...) among '
                f'{names[1:]}, or call it grapple_fixture'
            )
    if fixture not in names:
        raise InputError(f'{label}: fixture link {fixture!r} is not in the URDF (links {names})')
    # the root link frame l at the world origin: R0, r0 of its CoM frame
    T_bc = np.asarray(robot.base_link.T, dtype=float)
    R0, r0 = T_bc[:3, :3], T_bc[:3, 3]
    k = kinematics(R0, r0, np.zeros(0), robot)
    RL = np.asarray(k.RL, dtype=float).reshape(3, 3, -1)
    rL = np.asarray(k.rL, dtype=float).reshape(3, -1)
    bodies = [(float(robot.base_link.mass), R0, r0, np.asarray(robot.base_link.inertia, float))]
    bodies += [
        (float(link.mass), RL[:, :, i], rL[:, i], np.asarray(link.inertia, float))
        for i, link in enumerate(robot.links)
    ]
    mass = sum(b[0] for b in bodies)
    if not mass > 0:
        raise InputError(f'{label}: the target has no mass (give its links <inertial>)')
    com = sum(m * r for m, _, r, _ in bodies) / mass
    inertia = np.zeros((3, 3))
    for m, R, r, I in bodies:  # parallel axes to the composite CoM, in l's axes
        d = r - com
        inertia += R @ I @ R.T + m * (float(d @ d) * np.eye(3) - np.outer(d, d))
    i = robot.keys.link_id[fixture]
    R_f, p_f = link_frame_pose(robot, i, R0, r0, RL, rL)
    return Target.make(
        robot.name,
        mass,
        inertia,
        com,
        homogeneous(np.asarray(R_f, float), np.asarray(p_f, float)),
        fixture,
        source=label,
    )


# --- dynamics ------------------------------------------------------------------------------------
class FreeBody:
    """
    The target's dynamics (see the module docstring).

    ``target`` (a :class:`Target`), ``orbit`` (a
    :class:`~spart_ros.core.orbit.CircularOrbit`, or None: empty space), ``gravity`` (3,) a uniform
    field [m/s^2] (default zero; not with an orbit, whose tidal field is the gravity there).

    ``max_step`` [s] and ``max_angle`` [rad]: the RK4 step of :meth:`propagate` is at most
    ``max_step`` and turns the body by at most ``max_angle`` (``max_angle / |w|``); the defaults
    keep the error below 1e-10 (relative) over 20 s at tumble rates up to 30 deg/s.
    """

    def __init__(self, target, orbit=None, gravity=None, max_step=0.05, max_angle=0.005):
        if not isinstance(target, Target):
            raise InputError(f'target: expected a Target (load_target), got {chk.given(target)}')
        if orbit is not None and not isinstance(orbit, CircularOrbit):
            raise InputError(f'orbit: expected a CircularOrbit or None, got {chk.given(orbit)}')
        g = np.zeros(3) if gravity is None else chk.vector('gravity', gravity, 3)
        if orbit is not None and np.any(g != 0):
            raise InputError(
                'gravity: must be zero with an orbit (its tidal field is the gravity near the '
                f'reference point), got {g.tolist()}'
            )
        self.target, self.orbit, self.gravity = target, orbit, np.array(g, dtype=float)
        self.max_step = chk.scalar('max_step', max_step)
        self.max_angle = chk.scalar('max_angle', max_angle)
        if not (self.max_step > 0 and self.max_angle > 0):
            raise InputError(
                f'max_step and max_angle must be > 0, got {self.max_step}, {self.max_angle}'
            )
        inertia = np.asarray(target.inertia, dtype=float)
        self._I = tuple(inertia.ravel().tolist())
        self._Iinv = tuple(np.linalg.inv(inertia).ravel().tolist())
        self._g = tuple(self.gravity.tolist())
        if orbit is None:
            self._loads = None
        else:
            self._n2 = orbit.mean_motion**2
            self._a = orbit.radius
            self._mu = orbit.mu
            self._loads = self._linear_loads if orbit.model == 'linear' else self._nonlinear_loads

    # -- the loads (scalar: one stage costs microseconds) --------------------------------------
    def _radial(self, t):
        a = self.orbit.mean_motion * t
        return math.cos(a), math.sin(a)

    def _linear_loads(self, t, rx, ry, rz):
        """(acceleration (3 floats), the radial unit vector e, the torque gain 3 n^2)."""
        c, s = self._radial(t)
        n2 = self._n2
        er = c * rx + s * ry
        return (
            (n2 * (3.0 * er * c - rx), n2 * (3.0 * er * s - ry), -n2 * rz),
            (c, s, 0.0),
            3.0 * n2,
        )

    def _nonlinear_loads(self, t, rx, ry, rz):
        c, s = self._radial(t)
        a, n2 = self._a, self._n2
        q = (2.0 * (c * rx + s * ry) + (rx * rx + ry * ry + rz * rz) / a) / a
        lq = math.log1p(q)
        f = a * math.expm1(-1.5 * lq)
        scale = math.exp(-1.5 * lq)
        acc = (-n2 * (scale * rx + f * c), -n2 * (scale * ry + f * s), -n2 * scale * rz)
        dx, dy, dz = a * c + rx, a * s + ry, rz
        d = math.sqrt(dx * dx + dy * dy + dz * dz)
        return acc, (dx / d, dy / d, dz / d), 3.0 * self._mu / d**3

    def derivative(self, t, x):
        """
        Return dx/dt (13 floats) of the packed state ``x`` at time ``t`` [s].

        ``x`` = [r (3), v (3), quaternion (4, [x, y, z, w]), w (3)] (:meth:`pack`), a sequence of
        floats; scalar Python (a plant integrating the target with its own stages calls this).
        """
        rx, ry, rz, vx, vy, vz, qx, qy, qz, qw, wx, wy, wz = x
        I00, I01, I02, I10, I11, I12, I20, I21, I22 = self._I
        J00, J01, J02, J10, J11, J12, J20, J21, J22 = self._Iinv
        hx = I00 * wx + I01 * wy + I02 * wz
        hy = I10 * wx + I11 * wy + I12 * wz
        hz = I20 * wx + I21 * wy + I22 * wz
        tx = hy * wz - hz * wy  # -(w x I w) = (I w) x w
        ty = hz * wx - hx * wz
        tz = hx * wy - hy * wx
        ax, ay, az = self._g
        if self._loads is not None:
            (ax, ay, az), (ex, ey, ez), gain = self._loads(t, rx, ry, rz)
            # e in body axes: R' e (R of the quaternion, columns = body axes in the world)
            R = _rotation(qx, qy, qz, qw)
            bx = R[0] * ex + R[3] * ey + R[6] * ez
            by = R[1] * ex + R[4] * ey + R[7] * ez
            bz = R[2] * ex + R[5] * ey + R[8] * ez
            ix = I00 * bx + I01 * by + I02 * bz
            iy = I10 * bx + I11 * by + I12 * bz
            iz = I20 * bx + I21 * by + I22 * bz
            tx += gain * (by * iz - bz * iy)
            ty += gain * (bz * ix - bx * iz)
            tz += gain * (bx * iy - by * ix)
        # q' = q (x) [w/2; 0] (body-frame angular velocity)
        return (
            vx,
            vy,
            vz,
            ax,
            ay,
            az,
            0.5 * (qw * wx + qy * wz - qz * wy),
            0.5 * (qw * wy + qz * wx - qx * wz),
            0.5 * (qw * wz + qx * wy - qy * wx),
            -0.5 * (qx * wx + qy * wy + qz * wz),
            J00 * tx + J01 * ty + J02 * tz,
            J10 * tx + J11 * ty + J12 * tz,
            J20 * tx + J21 * ty + J22 * tz,
        )

    def _rk4(self, t, x, h):
        f = self.derivative
        k1 = f(t, x)
        h2 = 0.5 * h
        k2 = f(t + h2, [a + h2 * b for a, b in zip(x, k1)])
        k3 = f(t + h2, [a + h2 * b for a, b in zip(x, k2)])
        k4 = f(t + h, [a + h * b for a, b in zip(x, k3)])
        h6 = h / 6.0
        y = [a + h6 * (b + 2.0 * (c + d) + e) for a, b, c, d, e in zip(x, k1, k2, k3, k4)]
        n = math.sqrt(y[6] * y[6] + y[7] * y[7] + y[8] * y[8] + y[9] * y[9])
        y[6], y[7], y[8], y[9] = y[6] / n, y[7] / n, y[8] / n, y[9] / n
        return y

    def _step_size(self, x):
        w = math.sqrt(x[10] * x[10] + x[11] * x[11] + x[12] * x[12])
        if self.orbit is not None:
            w = max(w, self.orbit.mean_motion)
        return min(self.max_step, self.max_angle / w) if w > 0 else self.max_step

    def _advance(self, t, x, t_end):
        """Integrate the packed state x from ``t`` to ``t_end`` (>= t)."""
        while t < t_end:
            h = self._step_size(x)
            remaining = t_end - t
            if h >= remaining * (1.0 - 1e-12):
                return t_end, self._rk4(t, x, remaining)
            steps = math.ceil(remaining / h)  # equal steps up to t_end (no sliver at the end)
            h = remaining / steps
            x = self._rk4(t, x, h)
            t += h
        return t, x

    # -- public ---------------------------------------------------------------------------------
    @staticmethod
    def pack(state):
        """Return the 13 floats [r, v, quaternion [x, y, z, w], w] of ``state`` (TargetState)."""
        R = chk.rotation('state.R', state.R)
        q = _quaternion(np.asarray(R, dtype=float).tolist())
        return (
            chk.vector('state.r', state.r, 3).tolist()
            + chk.vector('state.v', state.v, 3).tolist()
            + q
            + chk.vector('state.w', state.w, 3).tolist()
        )

    @staticmethod
    def unpack(x):
        """Return the :data:`TargetState` of ``x``, 13 packed floats (:meth:`pack`)."""
        x = [float(v) for v in x]
        n = math.sqrt(sum(v * v for v in x[6:10]))
        R = np.array(_rotation(*(v / n for v in x[6:10]))).reshape(3, 3)
        return TargetState(R, np.array(x[0:3]), np.array(x[3:6]), np.array(x[10:13]))

    def accelerations(self, t, state):
        """
        Return (a (3,), alpha (3,)) at ``state`` and time ``t`` [s].

        a: the CoM's acceleration in the world; alpha: the angular acceleration in the body axes.
        """
        d = self.derivative(float(t), self.pack(state))
        return np.array(d[3:6]), np.array(d[10:13])

    def loads(self, t, state):
        """
        Return (force (3,), torque (3,)) on the body at ``state`` and time ``t``, world axes.

        The torque is about the CoM.

        The orbit's tidal force and gravity-gradient torque (or m g and zero): what the plants
        apply to it (:meth:`spart_ros.core.orbit.CircularOrbit.loads` computes the same).
        """
        R = np.asarray(state.R, dtype=float)
        m = self.target.mass
        if self.orbit is None:
            return m * self.gravity, np.zeros(3)
        f, tau = self.orbit.loads(
            float(t), [m], [state.r], [R], [np.asarray(self.target.inertia, float)]
        )
        return f[0], tau[0]

    def propagate(self, state, t0, times):
        """
        Return the :data:`TargetState` at each of ``times`` (k,) [s], from ``state`` at ``t0``.

        ``times`` at or after ``t0``, in increasing order; RK4 (class docstring).  Returns a
        list of states.
        """
        t0 = chk.scalar('t0', t0)
        times = np.atleast_1d(np.asarray(times, dtype=float))
        if times.ndim != 1 or not np.all(np.isfinite(times)):
            raise InputError(f'times: expected finite times [s], got {chk.given(times)}')
        if times.size and (times[0] < t0 or np.any(np.diff(times) < 0)):
            raise InputError(
                f'times: expected increasing times from t0 = {t0} s on, got {times.tolist()}'
            )
        x, t, out = self.pack(state), t0, []
        for tk in times.tolist():
            t, x = self._advance(t, x, tk)
            out.append(self.unpack(x))
        return out


class FixturePrediction:
    """
    The fixture's predicted motion from an estimate (module docstring).

    ``body``: the :class:`FreeBody`; ``estimate``: a :data:`TargetState` at time ``t`` [s] (in
    the world frame, or in LVLH with ``frame='lvlh'``: R l -> LVLH, r, v relative to LVLH in its
    axes, w relative to LVLH in body axes); ``frame``: 'world' or 'lvlh' (needs the body's
    orbit), the frame of the estimate and of every result.  :meth:`motion` at times at or after
    ``t``; the states reached are kept every ``max_step`` so that increasing times cost one RK4
    step each (asking for an earlier time starts again from the nearest kept state).
    """

    def __init__(self, body, estimate, t, frame='world'):
        if not isinstance(body, FreeBody):
            raise InputError(f'body: expected a FreeBody, got {chk.given(body)}')
        if frame not in ('world', 'lvlh'):
            raise InputError(f"frame: expected 'world' or 'lvlh', got {frame!r}")
        if frame == 'lvlh' and body.orbit is None:
            raise InputError("frame 'lvlh' needs the body's orbit (FreeBody(target, orbit=...))")
        self.body, self.frame, self.t = body, frame, chk.scalar('t', t)
        if frame == 'lvlh':
            R, r, v, w = (np.asarray(a, dtype=float) for a in estimate)
            R = chk.rotation('estimate.R', R)
            R_n, r_n, v_b, w_n = body.orbit.from_lvlh(self.t, R, r, R.T @ v, w)
            estimate = TargetState(R_n, r_n, R_n @ v_b, w_n)
        self._times, self._states = [self.t], [body.pack(estimate)]
        R_cf, p_cf = body.target.fixture_in_body
        self._fixture = (tuple(R_cf.ravel().tolist()), tuple(p_cf.tolist()))

    def state(self, t):
        """Return the predicted :data:`TargetState` at time ``t`` (>= the estimate's), world."""
        return self.body.unpack(self._packed(self._time(t)))

    def _time(self, t):
        t = float(t)
        if not t >= self.t:
            raise InputError(
                f't: {t} s is before the estimate ({self.t} s): the prediction runs forward only'
            )
        return t

    def _packed(self, t):
        """Return the packed state at ``t`` (>= the estimate's), world (see :meth:`state`)."""
        body, times, states = self.body, self._times, self._states
        while times[-1] + body.max_step <= t:  # a state kept every max_step
            t_next, x = body._advance(times[-1], states[-1], times[-1] + body.max_step)
            times.append(t_next)
            states.append(x)
        k = len(times) - 1 if t >= times[-1] else int(np.searchsorted(times, t, 'right')) - 1
        return body._advance(times[k], states[k], t)[1]

    def motion(self, t):
        """
        Return the fixture's :data:`FixtureMotion` at time ``t`` [s], in the prediction's frame.

        Pose, twist and acceleration (its dynamics' accelerations at the predicted state).
        """
        t = self._time(t)
        body = self.body
        x = self._packed(t)
        d = body.derivative(t, x)
        m = _fixture_motion(self._fixture, x, d)
        if self.frame == 'world':
            return m
        return _motion_in_lvlh(body.orbit, t, m)

    def target_state(self, t):
        """Return the predicted :data:`TargetState` at ``t`` in the prediction's frame."""
        state = self.state(t)
        if self.frame == 'world':
            return state
        R_l, r_l, v_b, w_l = self.body.orbit.to_lvlh(
            float(t), state.R, state.r, state.R.T @ state.v, state.w
        )
        return TargetState(R_l, r_l, R_l @ v_b, w_l)


def _fixture_motion(fixture, x, d):
    """Return the FixtureMotion of the packed state ``x`` and its derivative ``d`` (world)."""
    (F00, F01, F02, F10, F11, F12, F20, F21, F22), (fx, fy, fz) = fixture
    R00, R01, R02, R10, R11, R12, R20, R21, R22 = _rotation(*x[6:10])
    wx, wy, wz = x[10:13]
    bx, by, bz = d[10:13]
    rx, ry, rz = (
        R00 * fx + R01 * fy + R02 * fz,
        R10 * fx + R11 * fy + R12 * fz,
        R20 * fx + R21 * fy + R22 * fz,
    )
    ox, oy, oz = (
        R00 * wx + R01 * wy + R02 * wz,
        R10 * wx + R11 * wy + R12 * wz,
        R20 * wx + R21 * wy + R22 * wz,
    )
    ax, ay, az = (
        R00 * bx + R01 * by + R02 * bz,
        R10 * bx + R11 * by + R12 * bz,
        R20 * bx + R21 * by + R22 * bz,
    )
    ux, uy, uz = oy * rz - oz * ry, oz * rx - ox * rz, ox * ry - oy * rx  # w x rho
    R = np.array(
        [
            [
                R00 * F00 + R01 * F10 + R02 * F20,
                R00 * F01 + R01 * F11 + R02 * F21,
                R00 * F02 + R01 * F12 + R02 * F22,
            ],
            [
                R10 * F00 + R11 * F10 + R12 * F20,
                R10 * F01 + R11 * F11 + R12 * F21,
                R10 * F02 + R11 * F12 + R12 * F22,
            ],
            [
                R20 * F00 + R21 * F10 + R22 * F20,
                R20 * F01 + R21 * F11 + R22 * F21,
                R20 * F02 + R21 * F12 + R22 * F22,
            ],
        ]
    )
    twist = np.array([ox, oy, oz, x[3] + ux, x[4] + uy, x[5] + uz])
    acc = np.array(
        [
            ax,
            ay,
            az,
            d[3] + ay * rz - az * ry + oy * uz - oz * uy,
            d[4] + az * rx - ax * rz + oz * ux - ox * uz,
            d[5] + ax * ry - ay * rx + ox * uy - oy * ux,
        ]
    )
    return FixtureMotion(R, np.array([x[0] + rx, x[1] + ry, x[2] + rz]), twist, acc)


def _motion_in_lvlh(orbit, t, m):
    """Return a FixtureMotion in N in LVLH (rates relative to LVLH, which turns at (0, 0, n))."""
    C = orbit.lvlh_rotation(t)
    W = orbit.angular_velocity
    R, p = C.T @ m.R, C.T @ m.p
    omega = C.T @ m.twist[0:3] - W
    v = C.T @ m.twist[3:6] - np.cross(W, p)
    alpha = C.T @ m.acceleration[0:3] - np.cross(W, omega)
    a = C.T @ m.acceleration[3:6] - 2.0 * np.cross(W, v) - np.cross(W, np.cross(W, p))
    return FixtureMotion(R, p, np.concatenate([omega, v]), np.concatenate([alpha, a]))
