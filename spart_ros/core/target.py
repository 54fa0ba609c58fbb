"""
A free-flying target: its declaration, its frames and state, its odometry and initial state.

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

Its motion as a free rigid body and the fixture's predicted motion: :mod:`.free_body`.

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
from .attitude import (  # (_cross: np.cross costs 8 times as much)
    _cross,
    _unit_quaternion_rotation,
    rpy_rotation,
)
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
    return np.array(_unit_quaternion_rotation(*(q / n))).reshape(3, 3)


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
        return np.concatenate([R @ (self.inertia @ w) + _cross(r - o, p), p])

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
        twist = np.concatenate([omega, v + _cross(omega, rho)])
        acc = np.zeros(6)
        if acceleration is not None:
            a, alpha_b = acceleration
            alpha = R @ np.asarray(alpha_b, dtype=float)
            acc[0:3] = alpha
            acc[3:6] = np.asarray(a, dtype=float) + _cross(alpha, rho)
        acc[3:6] += _cross(omega, _cross(omega, rho))
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
            np.array(R, dtype=float), p + R @ self.com, R @ (v_l + _cross(w, self.com)), w
        )

    def odometry(self, state):
        """
        Return (R_l, p_l, v_l, w_l): the odometry of l (REP 105) at ``state``.

        The inverse of :meth:`state_from_odometry`.
        """
        R, r, v, w = (np.asarray(x, dtype=float) for x in state)
        return R.copy(), r - R @ self.com, R.T @ v - _cross(w, self.com), w.copy()

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
