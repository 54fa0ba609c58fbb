"""The robot model: a kinematic tree of rigid links, numbered as SPART numbers it.

A :class:`Robot` is constant once built (Pinocchio's Model): names, id maps,
masses, inertias, fixed transforms, joint types, axes and limits, and the
connectivity maps.  Numerical state lives in the function arguments.

Numbering (SPART): the base link has id 0 and is not in ``links``; links and
joints are numbered depth-first from the base, visiting a link's child joints
in the order they were declared; link i's parent joint is joint i.  Moving
joints get joint-variable ids ``q_id`` 1..n_q in the same order, fixed joints
``q_id = -1``.

Frames stored in the model (all 4x4 homogeneous transforms):
- ``base_link.T``: the base CoM ("inertial") frame in the URDF base link frame.
- ``joints[i].T``: joint i's frame in its parent link's CoM frame.
- ``links[i].T``: link i's CoM frame in its parent joint's frame (= the URDF
  link frame).
"""
from collections import namedtuple
from dataclasses import dataclass, field
import warnings

import numpy as np

from . import _backend as bk
from .errors import (InertiaError, InertiaWarning, MimicJointWarning, ModelError, ModelWarning,
                     SingularModelError, TopologyError, UnsupportedJointError)

FIXED, REVOLUTE, PRISMATIC = 0, 1, 2
JOINT_TYPES = {'fixed': FIXED, 'revolute': REVOLUTE, 'continuous': REVOLUTE, 'prismatic': PRISMATIC}
JOINT_TYPE_NAMES = {FIXED: 'fixed', REVOLUTE: 'revolute', PRISMATIC: 'prismatic'}

Connectivity = namedtuple('Connectivity', 'branch child child_base')
Connectivity.__doc__ = """SPART's connectivity maps (ConnectivityMap), shapes (n, n), (n, n), (n,).

branch[i-1, j-1] = 1 when link j is on link i's path to the base (i included);
child[i-1, j-1] = 1 when link i is a child of link j;
child_base[i-1] = 1 when link i is a child of the base."""


@dataclass
class JointLimits:
    """URDF ``<limit>``: position bounds (rad or m), effort (N m or N), velocity (rad/s or m/s).

    A bound the URDF does not give is +-inf (continuous joints have no position bounds).
    """
    lower: float = -np.inf
    upper: float = np.inf
    effort: float = np.inf
    velocity: float = np.inf


@dataclass
class BaseLink:
    """The base link (id 0). ``T``: its CoM frame in the URDF base link frame (4x4)."""
    name: str
    mass: float
    inertia: np.ndarray
    T: np.ndarray = field(default_factory=lambda: np.eye(4))
    id: int = 0


@dataclass
class Link:
    """Link ``id`` (1..n). ``T``: its CoM frame in its parent joint's frame (4x4);
    ``inertia``: (3, 3) about the CoM, in the CoM frame."""
    id: int
    name: str
    parent_joint: int
    mass: float
    inertia: np.ndarray
    T: np.ndarray


@dataclass
class Joint:
    """Joint ``id`` (1..n): type 0 fixed / 1 revolute / 2 prismatic; ``q_id`` 1..n_q or -1;
    ``axis`` (3,) in the joint frame; ``T``: the joint frame in the parent link's CoM frame."""
    id: int
    name: str
    type: int
    q_id: int
    parent_link: int
    child_link: int
    axis: np.ndarray
    T: np.ndarray
    limits: JointLimits = field(default_factory=JointLimits)


Mimic = namedtuple('Mimic', 'leader multiplier offset')
Mimic.__doc__ = """URDF ``<mimic>``: the follower's position is ``multiplier * q_leader + offset``."""

#: Relative tolerance of the inertia checks: violations smaller than this times the body's
#: largest principal moment are rounding (values printed with 6-7 significant digits) and pass.
INERTIA_RTOL = 1e-6

RobotKeys = namedtuple('RobotKeys', 'link_id joint_id q_id')
RobotKeys.__doc__ = """SPART's robot_keys: dicts name -> id for links (base = 0), joints and joint variables."""


class Robot:
    """A SPART robot model.  Build it with :func:`robot_from_urdf`, :func:`robot_from_dh`
    or :class:`RobotBuilder`; the constructor checks everything and raises ModelError.

    Attributes: ``name``, ``n_links_joints`` (n), ``n_q``, ``base_link``, ``links``
    (link id k at index k-1), ``joints`` (joint id k at index k-1), ``con``
    (:class:`Connectivity`), ``keys`` (:class:`RobotKeys`), and the arrays
    ``parent`` (n,) parent link id of each link, ``joint_type`` (n,),
    ``q_index`` (n,) 0-based joint-variable index or -1, ``masses`` (n,); ``mimic``
    {follower: :class:`Mimic`} and ``coordinates`` (the independent coordinates, see
    :mod:`spart_ros.core.mimic`); ``base_hint``, ``base_pose``, ``world_link`` (what a URDF
    ``world`` root said, see :func:`robot_from_urdf`).  A non-physical inertia is a warning
    (``strict=True``: an error); a singular H is an error only when a computation needs its
    inverse (:meth:`check_invertible`).
    """

    def __init__(self, name, base_link, links, joints, origin='manual', *, mimic=None, strict=False,
                 base_hint=None, base_pose=None, world_link=None):
        self.name = name
        self.origin = origin
        self.base_link = base_link
        self.links = list(links)
        self.joints = list(joints)
        self.n_links_joints = len(self.links)
        n = self.n_links_joints
        if len(self.joints) != n:
            raise TopologyError(f'robot {name!r}: {len(self.joints)} joints for {n} links (need one parent joint per link)')
        self.n_q = sum(1 for j in self.joints if j.type != FIXED)
        _check_unique('link', [base_link.name] + [l.name for l in self.links], name)
        _check_unique('joint', [j.name for j in self.joints], name)
        self._check_numbering()
        self.parent = np.array([j.parent_link for j in self.joints], dtype=np.int64)
        self.joint_type = np.array([j.type for j in self.joints], dtype=np.int64)
        self.q_index = np.array([j.q_id - 1 if j.type != FIXED else -1 for j in self.joints], dtype=np.int64)
        self.symbolic = bk.is_symbolic(base_link.mass, base_link.inertia, base_link.T,
                                       *[(l.mass, l.inertia, l.T) for l in self.links],
                                       *[(j.axis, j.T) for j in self.joints])
        if self.symbolic:
            _exact_model(self)
        else:
            self._check_finite()
        self.masses = np.array([l.mass for l in self.links], dtype=object if self.symbolic else float)
        from .connectivity import connectivity_map
        self.con = Connectivity(*connectivity_map(self))
        self.keys = RobotKeys(
            link_id={base_link.name: 0, **{l.name: l.id for l in self.links}},
            joint_id={j.name: j.id for j in self.joints},
            q_id={j.name: j.q_id for j in self.joints if j.type != FIXED})
        #: URDF root information: 'floating' (a floating joint from a massless root such as
        #: ``world``), 'fixed' (a fixed joint from ``world``; ``base_pose`` = the base link frame
        #: in the world frame, 4x4) or None (the URDF says nothing); ``world_link``: the root
        #: link that was dropped (None if none).  The caller still chooses fixed or floating.
        self.base_hint = base_hint
        self.base_pose = None if base_pose is None else np.asarray(base_pose, dtype=float)
        self.world_link = world_link
        self.mimic = self._resolve_mimic(mimic or {})
        self._coordinates = None
        self._singularity = {}
        if not self.symbolic:
            self._check_inertias(strict)
        if self.mimic:
            warnings.warn(f'robot {name!r}: joints {list(self.mimic)} mimic other joints; SPART\'s functions '
                          f'(Kinematics ... FD, Floating_ID) take them as independent joint variables (n_q = '
                          f'{self.n_q}); spart_ros.core.mimic and spart_ros.core.fast.mimic.fast_dynamics '
                          f'compute in the {self.coordinates.n} independent coordinates',
                          MimicJointWarning, stacklevel=2)

    # -- names ---------------------------------------------------------------------------
    @property
    def link_names(self):
        """Link names in id order, base first (length n + 1)."""
        return [self.base_link.name] + [l.name for l in self.links]

    @property
    def joint_names(self):
        """Joint names in id order (length n)."""
        return [j.name for j in self.joints]

    @property
    def q_names(self):
        """Names of the moving joints in joint-variable order (length n_q)."""
        return [j.name for j in sorted((j for j in self.joints if j.type != FIXED), key=lambda j: j.q_id)]

    def packed(self):
        """(mi, mf): the model packed for the compiled kernels (built once, numeric models only)."""
        from ._compiled import packed
        return packed(self)

    @property
    def total_mass(self):
        return self.base_link.mass + sum(self.masses)

    def link_index(self, name):
        """SPART link id of a link name (0 = base); ModelError naming the link if unknown."""
        try:
            return self.keys.link_id[name]
        except KeyError:
            raise ModelError(f'unknown link {name!r}; robot {self.name!r} has links {self.link_names}') from None

    def q_position(self, name):
        """0-based joint-variable index of a moving joint; ModelError if unknown or fixed."""
        if name not in self.keys.q_id:
            what = 'a fixed joint' if name in self.keys.joint_id else 'not a joint of the model'
            raise ModelError(f'joint {name!r} is {what}; moving joints are {self.q_names}')
        return self.keys.q_id[name] - 1

    def summary(self):
        """One line: name, links, moving joints, total mass."""
        m = self.total_mass
        return (f'robot {self.name!r}: {self.n_links_joints + 1} links (base {self.base_link.name!r}), '
                f'{self.n_q} moving joints, total mass {float(m) if not self.symbolic else m:.6g} kg')

    def __repr__(self):
        return f'<Robot {self.name!r} n={self.n_links_joints} n_q={self.n_q}>'

    # -- checks ---------------------------------------------------------------------------
    def _check_numbering(self):
        seen_q = []
        for k, (link, joint) in enumerate(zip(self.links, self.joints), start=1):
            if link.id != k or joint.id != k or link.parent_joint != k or joint.child_link != k:
                raise TopologyError(f'link/joint {k} ({link.name!r}/{joint.name!r}) break SPART numbering '
                                    '(link k must be the child of joint k, ids 1..n in order)')
            if not 0 <= joint.parent_link < k:
                raise TopologyError(f'joint {joint.name!r}: parent link id {joint.parent_link} must be below its '
                                    f'child id {k} (depth-first numbering)')
            if joint.type not in (FIXED, REVOLUTE, PRISMATIC):
                raise UnsupportedJointError(f'joint {joint.name!r}: type {joint.type!r} is not 0 (fixed), '
                                            '1 (revolute) or 2 (prismatic)')
            if joint.type != FIXED:
                seen_q.append(joint.q_id)
        if sorted(seen_q) != list(range(1, len(seen_q) + 1)):
            raise TopologyError(f'joint-variable ids {seen_q} are not 1..{len(seen_q)}')

    def _check_finite(self):
        """NaN or infinity in a mass, inertia, transform or axis: ModelError naming the element."""
        for what, name, value in [('base link', self.base_link.name, self.base_link.T)] + \
                [('link', l.name, l.T) for l in self.links] + [('joint', j.name, j.T) for j in self.joints] + \
                [('joint axis of', j.name, j.axis) for j in self.joints]:
            if not np.all(np.isfinite(np.asarray(value, dtype=float))):
                raise ModelError(f'{what} {name!r}: transform or axis holds NaN or infinity: '
                                 f'{np.asarray(value).tolist()}')
        for body in [self.base_link] + self.links:
            if not (np.isfinite(float(body.mass)) and np.all(np.isfinite(np.asarray(body.inertia, dtype=float)))):
                raise InertiaError(f'link {body.name!r}: mass {body.mass} or inertia '
                                   f'{np.asarray(body.inertia).tolist()} is not finite')

    def _check_inertias(self, strict):
        for body in [self.base_link] + self.links:
            check_mass_inertia(body.name, body.mass, body.inertia, strict=strict)

    def _resolve_mimic(self, mimic):
        """{follower: Mimic} with every leader an independent moving joint (chains composed)."""
        moving = set(self.keys.q_id)
        raw = {}
        for follower, m in mimic.items():
            leader, mult, off = m
            for role, jname in (('mimic joint', follower), ('mimicked joint', leader)):
                if jname not in self.keys.joint_id:
                    raise ModelError(f'joint {follower!r} mimics {leader!r}: {role} {jname!r} is not a joint of '
                                     f'robot {self.name!r}')
                if jname not in moving:
                    raise ModelError(f'joint {follower!r} mimics {leader!r}: {role} {jname!r} is a fixed joint '
                                     '(only moving joints can mimic or be mimicked)')
            if not (np.isfinite(float(mult)) and np.isfinite(float(off))):
                raise ModelError(f'joint {follower!r}: mimic multiplier {mult} or offset {off} is not finite')
            raw[follower] = Mimic(leader, float(mult), float(off))
        resolved = {}
        for follower in sorted(raw, key=lambda f: self.keys.q_id[f]):
            leader, mult, off = raw[follower]
            seen = [follower]
            while leader in raw:        # q_f = m (m2 q_l2 + o2) + o
                if leader in seen:
                    raise ModelError(f'mimic joints {seen} form a cycle: no joint among them is independent')
                seen.append(leader)
                nxt = raw[leader]
                leader, mult, off = nxt.leader, mult * nxt.multiplier, mult * nxt.offset + off
            resolved[follower] = Mimic(leader, mult, off)
        return resolved

    @property
    def coordinates(self):
        """The map from independent joint coordinates (mimic followers removed) to SPART's
        full joint variables (:class:`spart_ros.core.mimic.IndependentCoordinates`); the
        identity for robots without mimic joints."""
        if self._coordinates is None:
            from .mimic import IndependentCoordinates
            self._coordinates = IndependentCoordinates(self)
        return self._coordinates

    # -- what has no mass (singular generalized inertia) ----------------------------------
    def _subtree_sums(self):
        """(mass, sum |inertia|) of each link's subtree, (n,) each."""
        n = self.n_links_joints
        sub_mass = np.array([float(l.mass) for l in self.links])
        sub_inertia = np.array([np.abs(np.asarray(l.inertia, float)).sum() for l in self.links])
        for i in range(n - 1, -1, -1):
            p = self.parent[i]
            if p > 0:
                sub_mass[p - 1] += sub_mass[i]
                sub_inertia[p - 1] += sub_inertia[i]
        return sub_mass, sub_inertia

    def massless_joints(self):
        """{moving joint name: [links it moves]} for the moving joints that move nothing with
        mass (prismatic) or with mass or inertia (revolute): their columns of H are zero."""
        if self.symbolic:
            return {}
        sub_mass, sub_inertia = self._subtree_sums()
        out = {}
        for j in self.joints:
            i = j.child_link - 1
            if j.type == PRISMATIC and sub_mass[i] <= 0 or \
                    j.type == REVOLUTE and sub_mass[i] <= 0 and sub_inertia[i] <= 0:
                out[j.name] = [l.name for l in self.links if self.con.branch[l.id - 1, i]]
        return out

    def massless_base_cluster(self):
        """([base link and the links welded to it], [moving joints leaving them]) when that
        rigid cluster has no mass and a joint can move it without moving any mass as a
        floating base: a prismatic joint (the cluster slides against it), or a revolute
        joint when the cluster has no inertia either (it spins against it); else ([], [])."""
        if self.symbolic:
            return [], []
        cluster = {0}
        for j in self.joints:                      # depth-first order: parents come first
            if j.type == FIXED and j.parent_link in cluster:
                cluster.add(j.child_link)
        bodies = [self.base_link] + self.links
        if any(float(bodies[k].mass) > 0 for k in cluster):
            return [], []
        spins = not any(np.abs(np.asarray(bodies[k].inertia, float)).sum() > 0 for k in cluster)
        moving = [j.name for j in self.joints if j.parent_link in cluster and
                  (j.type == PRISMATIC or j.type == REVOLUTE and spins)]
        return ([bodies[k].name for k in sorted(cluster)], moving) if moving else ([], [])

    def singularity(self, floating=True, base_only=False, independent=False):
        """Why the generalized inertia matrix is singular, in words naming the coordinates,
        joints and links ('' when it is not).

        Tested once (then cached) at a generic configuration, where a singularity that the
        masses and inertias cause shows (a state-specific one, e.g. a point mass passing
        through a joint axis, may still occur): H is scaled to a unit diagonal and singular
        when its smallest eigenvalue is below 1e-10.  ``floating``: the (6 + n_q) matrix of a
        floating base, else the joint block; ``base_only``: only the base block H0 (what the
        floating-base inverse dynamics inverts); ``independent``: in the independent
        coordinates of a robot with mimic joints (``robot.coordinates``).
        """
        key = (bool(floating), bool(base_only), bool(independent))
        if key not in self._singularity:
            self._singularity[key] = '' if self.symbolic else self._find_singularity(*key)
        return self._singularity[key]

    def _find_singularity(self, floating, base_only, independent):
        if floating and float(self.total_mass) <= 0:
            return 'the robot has zero total mass, so a floating base has none'
        if base_only and not floating:
            return ''
        H, names = _generic_mass_matrix(self, floating, independent)
        if base_only:
            H, names = H[:6, :6], names[:6]
        null = _null_motion(H)
        if not null:
            return ''
        coordinates = [names[k] for k in null]
        reasons = [f'the motion of {coordinates} moves no mass (at a generic configuration)']
        links, joints = self.massless_base_cluster() if floating else ([], [])
        if links and any(c.startswith('base_') for c in coordinates):
            reasons.append(f'as a floating base, links {links} (the base and what is welded to it) have no mass and '
                           f'joints {joints} can turn or slide them without moving any mass')
        for joint, moved in self.massless_joints().items():
            if joint in coordinates:
                reasons.append(f'joint {joint!r} moves only massless links {moved}')
        return '; '.join(reasons)

    def check_invertible(self, floating=True, base_only=False, independent=False):
        """Raise SingularModelError naming the coordinates, joints and links at fault if the
        generalized inertia matrix (or its base block, ``base_only``) is singular: what
        forward dynamics (and floating-base inverse dynamics) needs.  See :meth:`singularity`."""
        why = self.singularity(floating, base_only, independent)
        if why:
            what = 'the base block H0 of the generalized inertia matrix' if base_only else \
                'the generalized inertia matrix' + (' in independent coordinates' if independent else '')
            raise SingularModelError(f'robot {self.name!r}: {what} is singular: {why} (kinematics, Jacobians and '
                                     'inverse dynamics work; forward dynamics needs mass behind every moving joint '
                                     'and a base that can be accelerated: give those links an <inertial>)')

    def check_floating_base(self):
        """Raise SingularModelError if the floating-base H is singular (massless whole tree)."""
        if not self.symbolic and float(self.total_mass) <= 0:
            raise SingularModelError(f'robot {self.name!r} has zero total mass: a floating base with no mass '
                                     'has a singular generalized inertia matrix (use a fixed base)')


BASE_COORDINATES = ('base_wx', 'base_wy', 'base_wz', 'base_vx', 'base_vy', 'base_vz')


def _generic_mass_matrix(robot, floating, independent):
    """(H, coordinate names) at a fixed generic state (seeded random attitude and joints)."""
    from .differential_kinematics import differential_kinematics
    from .generalized_inertia import generalized_inertia
    from .inertia import composite_body_inertia, inertia_in_inertial_frame
    from .kinematics import kinematics
    rng = np.random.default_rng(20240611)
    q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    R0 = q * np.sign(np.linalg.det(q))
    qm = rng.uniform(-1.0, 1.0, robot.n_q)
    if independent:
        qm = robot.coordinates.positions(qm[:robot.coordinates.n])
    RJ, RL, rJ, rL, e, g = kinematics(R0, np.zeros(3), qm, robot)
    Bij, Bi0, P0, pm = differential_kinematics(R0, np.zeros(3), rL, e, g, robot)
    I0, Im = inertia_in_inertial_frame(R0, RL, robot)
    M0, Mm = composite_body_inertia(I0, Im, Bij, Bi0, robot)
    H0, H0m, Hm = generalized_inertia(M0, Mm, Bij, Bi0, P0, pm, robot)
    H = np.block([[H0, H0m], [H0m.T, Hm]])
    names = list(BASE_COORDINATES) + robot.q_names
    if independent:
        T = robot.coordinates.generalized(floating=True)
        H = T.T @ H @ T
        names = list(BASE_COORDINATES) + robot.coordinates.names
    if not floating:
        H, names = H[6:, 6:], names[6:]
    return H, names


def _null_motion(H, tol=1e-10):
    """Indices of the coordinates in a null motion of the symmetric H ([] if none):
    H scaled to a unit diagonal, smallest eigenvalue below ``tol``."""
    if H.size == 0:
        return []
    d = np.diag(H).copy()
    if np.any(d <= 0):
        return [int(k) for k in np.flatnonzero(d <= 0)]
    s = 1.0 / np.sqrt(d)
    w, V = np.linalg.eigh(H * s[:, None] * s[None, :])
    if w[0] > tol:
        return []
    v = np.abs(V[:, 0])
    return [int(k) for k in np.flatnonzero(v > 0.1 * v.max())]


def _exact(a):
    """Object array with integral floats (0.0, 1.0, -1.0...) replaced by exact sympy Integers."""
    import sympy
    out = np.empty(np.shape(a), dtype=object)
    for idx, v in np.ndenumerate(np.asarray(a, dtype=object)):
        out[idx] = sympy.Integer(int(v)) if isinstance(v, (float, int, np.number)) and float(v).is_integer() \
            else sympy.sympify(v)
    return out


def _exact_model(robot):
    """Make every array of a symbolic model exact, so that no 1.0 leaks into expressions."""
    b = robot.base_link
    b.inertia, b.T = _exact(b.inertia), _exact(b.T)
    for link in robot.links:
        link.inertia, link.T = _exact(link.inertia), _exact(link.T)
    for joint in robot.joints:
        joint.axis, joint.T = _exact(joint.axis), _exact(joint.T)


def inertia_problems(inertia, rtol=INERTIA_RTOL):
    """What makes a symmetric (3, 3) inertia tensor impossible for a rigid body, beyond
    rounding: a list of sentences (empty when fine).  Tolerance: ``rtol`` times the largest
    principal moment (so a 1e-6 placeholder breaking the triangle inequality by 1e-22 passes)."""
    moments = np.linalg.eigvalsh(np.asarray(inertia, dtype=float))
    tol = rtol * max(np.abs(moments).max(), 1e-300)
    problems = []
    shown = '[' + ', '.join(f'{m:.6g}' for m in moments) + ']'
    if moments[0] < -tol:
        problems.append(f'is not positive semi-definite (principal moments {shown})')
    elif moments[0] + moments[1] < moments[2] - tol:
        problems.append(f'has principal moments {shown} that break the triangle inequality (I1 + I2 >= I3)')
    return problems


def check_mass_inertia(name, mass, inertia, strict=False):
    """Check a body's mass and inertia (about its CoM).

    InertiaError if the mass is negative or not finite, or the tensor is not a finite
    symmetric (3, 3) matrix.  A tensor no rigid body has (not positive semi-definite, or
    principal moments breaking the triangle inequality, beyond :data:`INERTIA_RTOL`) is used
    as given with an :class:`InertiaWarning` naming the link and values, as SPART and
    Pinocchio do (planar models such as SPART's ManiSat have moments [0, 0, Izz]);
    ``strict=True`` makes it an InertiaError.
    """
    inertia = np.asarray(inertia, dtype=float)
    if not np.isfinite(mass) or mass < 0:
        raise InertiaError(f'link {name!r}: mass {mass} must be finite and >= 0')
    if inertia.shape != (3, 3) or not np.all(np.isfinite(inertia)):
        raise InertiaError(f'link {name!r}: inertia must be a finite 3x3 matrix')
    scale = max(np.abs(inertia).max(), 1e-300)
    if np.abs(inertia - inertia.T).max() > 1e-9 * scale:
        raise InertiaError(f'link {name!r}: inertia tensor is not symmetric')
    problems = inertia_problems(inertia)
    if not problems:
        return
    i = inertia
    values = (f'ixx={i[0, 0]:.6g} iyy={i[1, 1]:.6g} izz={i[2, 2]:.6g} ixy={i[0, 1]:.6g} ixz={i[0, 2]:.6g} '
              f'iyz={i[1, 2]:.6g}')
    message = f'link {name!r}: inertia ({values}) {problems[0]}: no rigid body has this inertia'
    if strict:
        raise InertiaError(message)
    warnings.warn(message + '; used as given (strict=True refuses it)', InertiaWarning, stacklevel=3)


def homogeneous(R=None, p=None):
    """4x4 transform from a rotation (3, 3) and a translation (3,); object dtype if symbolic
    (the defaults are integer so that symbolic transforms stay exact)."""
    R = np.eye(3, dtype=int) if R is None else R
    p = np.zeros(3, dtype=int) if p is None else p
    T = bk.eye(4, R, p)
    T[:3, :3] = R
    T[:3, 3] = p
    return T


def inverse_transform(T):
    """Inverse of a 4x4 rigid transform (R' and -R' p)."""
    R, p = T[:3, :3], T[:3, 3]
    return homogeneous(R.T, -(R.T @ p))


@dataclass
class _LinkSpec:
    name: str
    mass: float
    inertia: np.ndarray
    com: np.ndarray  # CoM frame in the link frame, 4x4


@dataclass
class _JointSpec:
    name: str
    type: int
    parent: str
    child: str
    origin: np.ndarray  # joint frame in the PARENT LINK frame (URDF <origin>), 4x4
    axis: np.ndarray
    limits: JointLimits
    mimic: Mimic = None


class RobotBuilder:
    """Build a robot by hand, link by link, in URDF terms (frames at the link origins).

    >>> b = RobotBuilder('arm')
    >>> b.add_link('base', mass=10.0, inertia=np.eye(3))
    >>> b.add_link('upper', mass=1.0, inertia=np.eye(3) * 0.01, com=homogeneous(p=[0.5, 0, 0]))
    >>> b.add_joint('shoulder', 'revolute', parent='base', child='upper', axis=[0, 0, 1])
    >>> robot = b.build()

    ``com`` is the CoM frame in the link frame (URDF ``<inertial><origin>``);
    ``origin`` is the joint frame in the parent link frame (URDF ``<joint><origin>``);
    ``mimic=(leader, multiplier, offset)`` makes a moving joint follow another (URDF ``<mimic>``).
    Masses, inertias, transforms may hold sympy expressions for symbolic models.
    """

    def __init__(self, name='robot'):
        self.name = name
        self._links = {}
        self._joints = []

    def add_link(self, name, mass, inertia, com=None):
        if name in self._links:
            raise ModelError(f'link {name!r} is defined twice')
        inertia = bk.as_array(inertia, mass)
        self._links[name] = _LinkSpec(name, mass, inertia, np.eye(4) if com is None else bk.as_array(com))
        return self

    def add_joint(self, name, type, parent, child, origin=None, axis=None, limits=None, mimic=None):
        if isinstance(type, str):
            if type not in JOINT_TYPES:
                raise UnsupportedJointError(
                    f'joint {name!r}: type {type!r} is not supported (SPART joints are fixed, revolute, '
                    'continuous and prismatic; model a planar or floating joint as a chain of those)')
            type = JOINT_TYPES[type]
        if any(j.name == name for j in self._joints):
            raise ModelError(f'joint {name!r} is defined twice')
        if axis is None:
            axis = np.zeros(3) if type == FIXED else np.array([1.0, 0.0, 0.0])
        axis = bk.as_array(axis)
        self._joints.append(_JointSpec(name, type, parent, child,
                                       np.eye(4) if origin is None else bk.as_array(origin),
                                       axis, limits or JointLimits(), None if mimic is None else Mimic(*mimic)))
        return self

    def build(self, strict=False):
        """The Robot (``strict=True``: a non-physical inertia is an error, not a warning)."""
        return _build_tree(self.name, list(self._links.values()), self._joints, strict=strict)


def _check_unique(kind, names, robot_name):
    """ModelError naming the names given more than once."""
    seen, twice = set(), []
    for n in names:
        if n in seen and n not in twice:
            twice.append(n)
        seen.add(n)
    if twice:
        raise ModelError(f'robot {robot_name!r}: {kind} names {twice} are defined more than once '
                         f'({kind} names must be unique)')


def _build_tree(name, link_specs, joint_specs, origin='manual', **robot_options):
    """Number a tree of URDF-style specs depth-first and make a Robot (checks topology);
    ``robot_options`` go to :class:`Robot` (strict, base_hint...)."""
    _check_unique('link', [l.name for l in link_specs], name)
    _check_unique('joint', [j.name for j in joint_specs], name)
    links = {l.name: l for l in link_specs}
    if not links:
        raise TopologyError(f'robot {name!r} has no links')
    children = {l: [] for l in links}
    parent_of = {}
    for j in joint_specs:
        for role, lname in (('parent', j.parent), ('child', j.child)):
            if lname not in links:
                raise TopologyError(f'joint {j.name!r}: {role} link {lname!r} is not defined')
        if j.child in parent_of:
            raise TopologyError(f'link {j.child!r} has two parent joints ({parent_of[j.child].name!r} and '
                                f'{j.name!r}): a kinematic tree needs exactly one')
        parent_of[j.child] = j
        children[j.parent].append(j)
    roots = [l for l in links if l not in parent_of]
    if len(roots) != 1:
        if not roots:
            raise TopologyError(f'robot {name!r}: every link has a parent, the joints form a cycle')
        raise TopologyError(f'robot {name!r} has {len(roots)} root links {roots}: a kinematic tree has exactly one '
                            '(connect them with joints)')
    root = links[roots[0]]
    base = BaseLink(root.name, root.mass, root.inertia, root.com)
    out_links, out_joints, q = [], [], 0
    com_of = {root.name: root.com}
    id_of = {root.name: 0}
    stack = list(reversed(children[root.name]))
    while stack:
        js = stack.pop()
        k = len(out_links) + 1
        child = links[js.child]
        if js.type != FIXED:
            q += 1
            axis = js.axis
            if not bk.is_symbolic(axis):
                nrm = float(np.linalg.norm(axis))
                if nrm < 1e-12:
                    raise ModelError(f'joint {js.name!r}: axis {axis.tolist()} has zero length')
                if abs(nrm - 1.0) > 1e-9:
                    warnings.warn(f'joint {js.name!r}: axis {axis.tolist()} normalized (URDF axes are unit vectors)',
                                  ModelWarning, stacklevel=2)
                    axis = axis / nrm
        else:
            axis = js.axis
        out_joints.append(Joint(k, js.name, js.type, q if js.type != FIXED else -1, id_of[js.parent], k, axis,
                                inverse_transform(com_of[js.parent]) @ js.origin, js.limits))
        out_links.append(Link(k, child.name, k, child.mass, child.inertia, child.com))
        com_of[child.name] = child.com
        id_of[child.name] = k
        stack.extend(reversed(children[child.name]))
    unreached = [l for l in links if l not in id_of]
    if unreached:
        raise TopologyError(f'links {unreached} are not connected to the root {root.name!r} (the joints form a cycle)')
    mimic = {j.name: j.mimic for j in joint_specs if j.mimic is not None}
    return Robot(name, base, out_links, out_joints, origin=origin, mimic=mimic, **robot_options)
