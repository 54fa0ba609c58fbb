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
from .errors import InertiaError, ModelError, SingularModelError, TopologyError, UnsupportedJointError

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


RobotKeys = namedtuple('RobotKeys', 'link_id joint_id q_id')
RobotKeys.__doc__ = """SPART's robot_keys: dicts name -> id for links (base = 0), joints and joint variables."""


class Robot:
    """A SPART robot model.  Build it with :func:`robot_from_urdf`, :func:`robot_from_dh`
    or :class:`RobotBuilder`; the constructor checks everything and raises ModelError.

    Attributes: ``name``, ``n_links_joints`` (n), ``n_q``, ``base_link``, ``links``
    (link id k at index k-1), ``joints`` (joint id k at index k-1), ``con``
    (:class:`Connectivity`), ``keys`` (:class:`RobotKeys`), and the arrays
    ``parent`` (n,) parent link id of each link, ``joint_type`` (n,),
    ``q_index`` (n,) 0-based joint-variable index or -1, ``masses`` (n,).
    """

    def __init__(self, name, base_link, links, joints, origin='manual'):
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
        self._check_numbering()
        self.parent = np.array([j.parent_link for j in self.joints], dtype=np.int64)
        self.joint_type = np.array([j.type for j in self.joints], dtype=np.int64)
        self.q_index = np.array([j.q_id - 1 if j.type != FIXED else -1 for j in self.joints], dtype=np.int64)
        self.symbolic = bk.is_symbolic(base_link.mass, base_link.inertia, base_link.T,
                                       *[(l.mass, l.inertia, l.T) for l in self.links],
                                       *[(j.axis, j.T) for j in self.joints])
        if self.symbolic:
            _exact_model(self)
        self.masses = np.array([l.mass for l in self.links], dtype=object if self.symbolic else float)
        from .connectivity import connectivity_map
        self.con = Connectivity(*connectivity_map(self))
        self.keys = RobotKeys(
            link_id={base_link.name: 0, **{l.name: l.id for l in self.links}},
            joint_id={j.name: j.id for j in self.joints},
            q_id={j.name: j.q_id for j in self.joints if j.type != FIXED})
        if not self.symbolic:
            self._check_inertias()
            self._check_not_singular()

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

    def _check_inertias(self):
        bodies = [(self.base_link.name, self.base_link.mass, self.base_link.inertia)]
        bodies += [(l.name, l.mass, l.inertia) for l in self.links]
        for name, mass, inertia in bodies:
            check_mass_inertia(name, mass, inertia)

    def _check_not_singular(self):
        """Every moving joint must move something with mass or inertia, else H is singular."""
        n = self.n_links_joints
        sub_mass = np.array([float(l.mass) for l in self.links])
        sub_inertia = np.array([np.abs(l.inertia).sum() for l in self.links])
        for i in range(n - 1, -1, -1):
            p = self.parent[i]
            if p > 0:
                sub_mass[p - 1] += sub_mass[i]
                sub_inertia[p - 1] += sub_inertia[i]
        for j in self.joints:
            if j.type == FIXED:
                continue
            i = j.child_link - 1
            if j.type == PRISMATIC and sub_mass[i] <= 0:
                raise SingularModelError(f'prismatic joint {j.name!r} moves no mass (its subtree has zero mass): '
                                         'the generalized inertia matrix would be singular')
            if j.type == REVOLUTE and sub_mass[i] <= 0 and sub_inertia[i] <= 0:
                raise SingularModelError(f'revolute joint {j.name!r} moves no mass or inertia (its subtree is '
                                         'massless): the generalized inertia matrix would be singular')

    def check_floating_base(self):
        """Raise SingularModelError if the floating-base H is singular (massless whole tree)."""
        if not self.symbolic and float(self.total_mass) <= 0:
            raise SingularModelError(f'robot {self.name!r} has zero total mass: a floating base with no mass '
                                     'has a singular generalized inertia matrix (use a fixed base)')


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


def check_mass_inertia(name, mass, inertia):
    """Raise InertiaError unless mass >= 0 and inertia is a symmetric, positive
    semi-definite (3, 3) matrix whose principal moments satisfy the triangle inequality."""
    inertia = np.asarray(inertia, dtype=float)
    if not np.isfinite(mass) or mass < 0:
        raise InertiaError(f'link {name!r}: mass {mass} must be finite and >= 0')
    if inertia.shape != (3, 3) or not np.all(np.isfinite(inertia)):
        raise InertiaError(f'link {name!r}: inertia must be a finite 3x3 matrix')
    scale = max(np.abs(inertia).max(), 1e-300)
    if np.abs(inertia - inertia.T).max() > 1e-9 * scale:
        raise InertiaError(f'link {name!r}: inertia tensor is not symmetric')
    moments = np.linalg.eigvalsh(inertia)
    tol = 1e-9 * scale
    if moments[0] < -tol:
        raise InertiaError(f'link {name!r}: inertia tensor is not positive semi-definite '
                           f'(principal moments {moments})')
    if moments[0] + moments[1] < moments[2] - tol:
        raise InertiaError(f'link {name!r}: principal moments {moments} break the triangle inequality '
                           '(I1 + I2 >= I3): no rigid body has this inertia')


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


class RobotBuilder:
    """Build a robot by hand, link by link, in URDF terms (frames at the link origins).

    >>> b = RobotBuilder('arm')
    >>> b.add_link('base', mass=10.0, inertia=np.eye(3))
    >>> b.add_link('upper', mass=1.0, inertia=np.eye(3) * 0.01, com=homogeneous(p=[0.5, 0, 0]))
    >>> b.add_joint('shoulder', 'revolute', parent='base', child='upper', axis=[0, 0, 1])
    >>> robot = b.build()

    ``com`` is the CoM frame in the link frame (URDF ``<inertial><origin>``);
    ``origin`` is the joint frame in the parent link frame (URDF ``<joint><origin>``).
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

    def add_joint(self, name, type, parent, child, origin=None, axis=None, limits=None):
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
                                       axis, limits or JointLimits()))
        return self

    def build(self):
        return _build_tree(self.name, list(self._links.values()), self._joints)


def _build_tree(name, link_specs, joint_specs, origin='manual'):
    """Number a tree of URDF-style specs depth-first and make a Robot (checks topology)."""
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
                    warnings.warn(f'joint {js.name!r}: axis {axis.tolist()} normalized (URDF axes are unit vectors)')
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
    return Robot(name, base, out_links, out_joints, origin=origin)
