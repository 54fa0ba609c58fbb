"""
The robot model: a kinematic tree of rigid links, numbered as SPART numbers it.

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

Each joint also carries its :class:`JointDynamics` (URDF ``<dynamics damping friction>`` and a
rotor inertia, ``armature``): constant data, zero unless declared.  SPART's functions never use
them; the fast path adds them when asked (:mod:`spart_ros.core.joint_friction`).
"""

from collections import namedtuple
from dataclasses import dataclass, field
import math
import numbers
import warnings

import numpy as np

from . import _backend as bk
from . import checks as chk
from .errors import (
    InertiaError,
    InertiaWarning,
    InputError,
    MimicJointWarning,
    ModelError,
    ModelWarning,
    SingularModelError,
    TopologyError,
    UnsupportedJointError,
)
from .mimic import IndependentCoordinates

FIXED, REVOLUTE, PRISMATIC = 0, 1, 2
JOINT_TYPES = {
    'fixed': FIXED,
    'revolute': REVOLUTE,
    'continuous': REVOLUTE,
    'prismatic': PRISMATIC,
}
JOINT_TYPE_NAMES = {FIXED: 'fixed', REVOLUTE: 'revolute', PRISMATIC: 'prismatic'}

Connectivity = namedtuple('Connectivity', 'branch child child_base')
Connectivity.__doc__ = """SPART's connectivity maps (ConnectivityMap), shapes (n, n), (n, n), (n,).

branch[i-1, j-1] = 1 when link j is on link i's path to the base (i included);
child[i-1, j-1] = 1 when link i is a child of link j;
child_base[i-1] = 1 when link i is a child of the base."""


def connectivity(parent):
    """
    Return the :class:`Connectivity` of a tree from its parent array (n,).

    ``parent``: the parent link id of each link 1..n (0 = the base), parents numbered before their
    children (SPART's numbering).
    """
    n = len(parent)
    branch = np.zeros((n, n), dtype=np.int64)
    child = np.zeros((n, n), dtype=np.int64)
    child_base = np.zeros(n, dtype=np.int64)
    for i in range(1, n + 1):
        p = parent[i - 1]
        if p == 0:
            child_base[i - 1] = 1
        else:
            child[i - 1, p - 1] = 1
            branch[i - 1] = branch[p - 1]  # parents come first in SPART numbering
        branch[i - 1, i - 1] = 1
    return Connectivity(branch, child, child_base)


@dataclass
class JointLimits:
    """
    URDF ``<limit>``: position bounds (rad or m), effort (N m or N), velocity (rad/s or m/s).

    ``lower``, ``upper``: the position bounds; ``effort``, ``velocity``: the bounds of each.

    A bound the URDF does not give is +-inf (continuous joints have no position bounds).
    """

    lower: float = -np.inf
    upper: float = np.inf
    effort: float = np.inf
    velocity: float = np.inf


@dataclass(frozen=True)
class JointDynamics:
    """
    What a moving joint adds to the rigid-body dynamics, MuJoCo's joint attributes in URDF terms.

    ``damping`` (viscous, URDF ``<dynamics damping>``) [N m s/rad or N s/m], ``friction`` (Coulomb,
    URDF ``<dynamics friction>``) [N m or N], ``armature`` (the rotor inertia a motor adds on the
    joint's diagonal of H, reflected through its gear: MuJoCo's ``armature``; URDF has none) [kg
    m^2 or kg]. All >= 0 and finite; zero when not declared. How the fast path uses them:
    :mod:`spart_ros.core.joint_friction`.
    """

    damping: float = 0.0
    friction: float = 0.0
    armature: float = 0.0

    @property
    def declared(self):
        """Return True if any of the three is not zero."""
        return bool(self.damping or self.friction or self.armature)


#: the names of :class:`JointDynamics`' fields
JOINT_DYNAMICS_FIELDS = ('damping', 'friction', 'armature')


def check_joint_dynamics(what, dynamics):
    """
    Return ``dynamics`` as a :class:`JointDynamics` of finite numbers >= 0 (floats).

    ModelError naming the joint (``what``) and the field otherwise.
    """
    if not isinstance(dynamics, JointDynamics):
        raise ModelError(
            f'{what}: dynamics: expected JointDynamics(damping, friction, armature), got '
            f'{chk.given(dynamics)}'
        )
    values = {}
    for key in JOINT_DYNAMICS_FIELDS:
        v = getattr(dynamics, key)
        if (
            isinstance(v, (bool, np.bool_))
            or not isinstance(v, numbers.Real)
            or not math.isfinite(v)
            or v < 0
        ):
            raise ModelError(
                f'{what}: dynamics.{key}: expected a finite number >= 0, got {chk.given(v)}'
            )
        values[key] = float(v)
    return JointDynamics(**values)


@dataclass
class BaseLink:
    """
    The base link (id 0).

    ``name``, ``mass`` [kg], ``inertia`` (3, 3) about the CoM in the CoM frame; ``T``: its CoM
    frame in the URDF base link frame (4x4).
    """

    name: str
    mass: float
    inertia: np.ndarray
    T: np.ndarray = field(default_factory=lambda: np.eye(4))
    id: int = 0


@dataclass
class Link:
    """
    Link ``id`` (1..n).

    ``name``; ``parent_joint``: the id of its parent joint; ``mass`` [kg]; ``T``: its CoM frame in
    its parent joint's frame (4x4); ``inertia``: (3, 3) about the CoM, in
    the CoM frame.
    """

    id: int
    name: str
    parent_joint: int
    mass: float
    inertia: np.ndarray
    T: np.ndarray


@dataclass
class Joint:
    """
    Joint ``id`` (1..n): type 0 fixed / 1 revolute / 2 prismatic; ``q_id`` 1..n_q or -1.

    ``name``; ``parent_link``, ``child_link``: link ids; ``axis`` (3,) in the joint frame; ``T``:
    the joint frame in the parent link's CoM frame;
    ``limits`` (:class:`JointLimits`); ``dynamics`` (:class:`JointDynamics`: damping, Coulomb
    friction, rotor inertia; zero for a fixed joint).
    """

    id: int
    name: str
    type: int
    q_id: int
    parent_link: int
    child_link: int
    axis: np.ndarray
    T: np.ndarray
    limits: JointLimits = field(default_factory=JointLimits)
    dynamics: JointDynamics = field(default_factory=JointDynamics)


Mimic = namedtuple('Mimic', 'leader multiplier offset')
Mimic.__doc__ = (
    """URDF ``<mimic>``: the follower's position is ``multiplier * q_leader + offset``."""
)

#: Relative tolerance of the inertia checks: violations smaller than this times the body's
#: largest principal moment are rounding and pass.  Entries printed with 6 significant digits
#: are off by up to 5e-6 of the largest moment each, which moves I1 + I2 - I3 by up to ~2.6e-5 of
#: it (measured on random thin plates and rods: 8e-6); a 1 % violation is 200 times this.
INERTIA_RTOL = 5e-5

RobotKeys = namedtuple('RobotKeys', 'link_id joint_id q_id')
RobotKeys.__doc__ = (
    """SPART's robot_keys: dicts name -> id for links (base = 0), joints and joint variables."""
)


class Robot:
    """
    A SPART robot model.

    Build it with :func:`robot_from_urdf`, :func:`robot_from_dh` or :class:`RobotBuilder`; the
    constructor checks everything and raises ModelError.  ``origin``: where the model came
    from ('urdf', 'DH', 'manual').

    Attributes: ``name``, ``n_links_joints`` (n), ``n_q``, ``base_link``, ``links``
    (link id k at index k-1: ``robot.links[i]`` is link id i + 1, and the base, id 0, is not
    in it; :meth:`link` takes an id as :meth:`link_index` returns it, or a name), ``joints``
    (joint id k at index k-1), ``con``
    (:class:`Connectivity`), ``keys`` (:class:`RobotKeys`), and the arrays
    ``parent`` (n,) parent link id of each link, ``joint_type`` (n,),
    ``q_index`` (n,) 0-based joint-variable index or -1, ``masses`` (n,); ``mimic``
    {follower: :class:`Mimic`} and ``coordinates`` (the independent coordinates, see
    :mod:`spart_ros.core.mimic`); ``base_hint``, ``base_pose``, ``world_link`` (what a URDF
    ``world`` root said, see :func:`robot_from_urdf`).  A non-physical inertia is a warning
    (``strict=True``: an error); a singular H is an error only when a computation needs its
    inverse (:func:`spart_ros.core.invertibility.check_invertible`).

    A Robot is data (Pinocchio's Model): built and checked once, never changed afterwards; the
    algorithms that run on it (kinematics, dynamics, the singularity analysis) are functions of
    their own modules, and the compiled fast path keeps its packed arrays beside it
    (:mod:`spart_ros.core.compiled_model`).
    """

    def __init__(
        self,
        name,
        base_link,
        links,
        joints,
        origin='manual',
        *,
        mimic=None,
        strict=False,
        base_hint=None,
        base_pose=None,
        world_link=None,
    ):
        links, joints = _check_arguments(
            name, base_link, links, joints, origin, mimic, strict, base_hint, world_link
        )
        self.name = name
        self.origin = origin
        self.base_link = base_link
        self.links = links
        self.joints = joints
        self.n_links_joints = len(self.links)
        n = self.n_links_joints
        if len(self.joints) != n:
            raise TopologyError(
                f'links, joints: robot {name!r} has {n} links and {len(self.joints)} joints (need '
                'one parent joint per link)'
            )
        self.n_q = sum(1 for j in self.joints if j.type != FIXED)
        _check_unique('link', [base_link.name] + [link.name for link in self.links], name)
        _check_unique('joint', [j.name for j in self.joints], name)
        self._check_numbering()
        self.parent = np.array([j.parent_link for j in self.joints], dtype=np.int64)
        self.joint_type = np.array([j.type for j in self.joints], dtype=np.int64)
        self.q_index = np.array(
            [j.q_id - 1 if j.type != FIXED else -1 for j in self.joints], dtype=np.int64
        )
        self._check_parts()
        self.symbolic = bk.is_symbolic(
            base_link.mass,
            base_link.inertia,
            base_link.T,
            *[(link.mass, link.inertia, link.T) for link in self.links],
            *[(j.axis, j.T) for j in self.joints],
        )
        if self.symbolic:
            _exact_model(self)
        self.masses = np.array(
            [link.mass for link in self.links], dtype=object if self.symbolic else float
        )
        self.con = connectivity(self.parent)
        self.keys = RobotKeys(
            link_id={base_link.name: 0, **{link.name: link.id for link in self.links}},
            joint_id={j.name: j.id for j in self.joints},
            q_id={j.name: j.q_id for j in self.joints if j.type != FIXED},
        )
        #: URDF root information: 'floating' (a floating joint from a massless root such as
        #: ``world``), 'fixed' (a fixed joint from ``world``; ``base_pose`` = the base link frame
        #: in the world frame, 4x4) or None (the URDF says nothing); ``world_link``: the root
        #: link that was dropped (None if none).  The caller still chooses fixed or floating.
        self.base_hint = base_hint
        self.base_pose = None if base_pose is None else _numeric_transform('base_pose', base_pose)
        self.world_link = world_link
        self.mimic = self._resolve_mimic(mimic or {})
        #: the map from independent joint coordinates (mimic followers removed) to SPART's full
        #: joint variables (:class:`spart_ros.core.mimic.IndependentCoordinates`); the identity for
        #: robots without mimic joints.
        self.coordinates = IndependentCoordinates(self)
        if not self.symbolic:
            self._check_inertias(strict)
        if self.mimic:
            warnings.warn(
                f"robot {name!r}: joints {list(self.mimic)} mimic other joints; SPART's functions "
                '(Kinematics ... FD, Floating_ID) take them as independent joint variables (n_q = '
                f'{self.n_q}); spart_ros.core.mimic and spart_ros.core.fast.mimic.fast_dynamics '
                f'compute in the {self.coordinates.n} independent coordinates',
                MimicJointWarning,
                stacklevel=2,
            )

    # -- names ---------------------------------------------------------------------------
    @property
    def link_names(self):
        """Link names in id order, base first (length n + 1)."""
        return [self.base_link.name] + [link.name for link in self.links]

    @property
    def joint_names(self):
        """Joint names in id order (length n)."""
        return [j.name for j in self.joints]

    @property
    def q_names(self):
        """Names of the moving joints in joint-variable order (length n_q)."""
        return [
            j.name
            for j in sorted((j for j in self.joints if j.type != FIXED), key=lambda j: j.q_id)
        ]

    @property
    def total_mass(self):
        return self.base_link.mass + sum(self.masses)

    def link_index(self, name):
        """
        Return the SPART link id of a link name; ModelError naming the link if unknown.

        0 = base; ``robot.link(id)`` is that link, which is ``robot.links[id - 1]`` for id >= 1.
        """
        if not isinstance(name, str):
            raise InputError(f'name: expected a link name (a string), got {chk.given(name)}')
        try:
            return self.keys.link_id[name]
        except KeyError:
            raise ModelError(
                f'unknown link {name!r}; robot {self.name!r} has links {self.link_names}'
            ) from None

    def link(self, key):
        """
        Return the link with SPART id ``key``, or name ``key``.

        Id 0 is the base: a :class:`BaseLink`; 1..n: a :class:`Link`, ``robot.links[key - 1]``. Its
        ``T`` is its CoM frame in its URDF link frame either way. InputError for an id out of range
        or a name unknown.
        """
        i = chk.link_id('key', key, self)
        return self.base_link if i == 0 else self.links[i - 1]

    def q_position(self, name):
        """Return the 0-based joint-variable index of moving joint ``name`` (or ModelError)."""
        if not isinstance(name, str):
            raise InputError(f'name: expected a joint name (a string), got {chk.given(name)}')
        if name not in self.keys.q_id:
            what = 'a fixed joint' if name in self.keys.joint_id else 'not a joint of the model'
            raise ModelError(f'joint {name!r} is {what}; moving joints are {self.q_names}')
        return self.keys.q_id[name] - 1

    def summary(self):
        """Return one line: name, links, moving joints, total mass."""
        m = self.total_mass
        return (
            f'robot {self.name!r}: {self.n_links_joints + 1} links (base '
            f'{self.base_link.name!r}), {self.n_q} moving joints, total mass '
            f'{float(m) if not self.symbolic else m:.6g} kg'
        )

    def __repr__(self):
        return f'<Robot {self.name!r} n={self.n_links_joints} n_q={self.n_q}>'

    # -- checks ---------------------------------------------------------------------------
    def _check_numbering(self):
        seen_q = []
        for k, (link, joint) in enumerate(zip(self.links, self.joints), start=1):
            if link.id != k or joint.id != k or link.parent_joint != k or joint.child_link != k:
                raise TopologyError(
                    f'link/joint {k} ({link.name!r}/{joint.name!r}) break SPART numbering '
                    '(link k must be the child of joint k, ids 1..n in order)'
                )
            if not 0 <= joint.parent_link < k:
                raise TopologyError(
                    f'joint {joint.name!r}: parent link id {joint.parent_link} must be below its '
                    f'child id {k} (depth-first numbering)'
                )
            if joint.type not in (FIXED, REVOLUTE, PRISMATIC):
                raise UnsupportedJointError(
                    f'joint {joint.name!r}: type {joint.type!r} is not 0 (fixed), '
                    '1 (revolute) or 2 (prismatic)'
                )
            if joint.type != FIXED:
                seen_q.append(joint.q_id)
        if sorted(seen_q) != list(range(1, len(seen_q) + 1)):
            raise TopologyError(f'joint-variable ids {seen_q} are not 1..{len(seen_q)}')

    def _check_parts(self):
        """
        Every link's mass, inertia and frame, every joint's axis, frame and limits.

        Real numbers (or sympy expressions), finite, of the right shape, frames rigid transforms,
        moving joints' axes unit vectors. ModelError naming the link or joint; the arrays are kept
        as checked (float64, or object arrays if symbolic).
        """
        for body in [self.base_link] + self.links:
            what = f'link {body.name!r}'
            body.mass = body_mass(f'{what}: mass', body.mass)
            body.inertia = model_array(f'{what}: inertia', body.inertia, (3, 3), InertiaError)
            body.T = rigid_transform(f'{what}: T', body.T)
        for j in self.joints:
            what = f'joint {j.name!r}'
            j.T = rigid_transform(f'{what}: T', j.T)
            j.axis = model_array(f'{what}: axis', j.axis, (3,))
            if j.type != FIXED and j.axis.dtype != object:
                norm = math.sqrt(math.fsum(v * v for v in j.axis.tolist()))
                if abs(norm - 1.0) > 1e-6:
                    raise ModelError(
                        f'{what}: axis {j.axis.tolist()} is not a unit vector (norm {norm:.6g}; '
                        'RobotBuilder and URDF loading normalize axes, Robot takes them as given)'
                    )
            check_limits(what, j.limits)
            j.dynamics = check_joint_dynamics(what, j.dynamics)
            if j.type == FIXED and j.dynamics.declared:
                raise ModelError(
                    f'{what}: a fixed joint has no damping, friction or armature (got '
                    f'{j.dynamics})'
                )

    @property
    def declares_joint_dynamics(self):
        """Return True if a joint declares damping, friction or armature (JointDynamics)."""
        return any(j.dynamics.declared for j in self.joints)

    def _check_inertias(self, strict):
        for body in [self.base_link] + self.links:
            check_mass_inertia(body.name, body.mass, body.inertia, strict=strict)

    def _resolve_mimic(self, mimic):
        """{follower: Mimic} with every leader an independent moving joint (chains composed)."""
        moving = set(self.keys.q_id)
        raw = {}
        for follower, m in mimic.items():
            follower = _name('mimic', follower, 'joint')
            leader, mult, off = _mimic(f'joint {follower!r}', m)  # a name and two finite numbers
            for role, jname in (('mimic joint', follower), ('mimicked joint', leader)):
                if jname not in self.keys.joint_id:
                    raise ModelError(
                        f'joint {follower!r} mimics {leader!r}: {role} {jname!r} is not a joint '
                        f'of robot {self.name!r}'
                    )
                if jname not in moving:
                    raise ModelError(
                        f'joint {follower!r} mimics {leader!r}: {role} {jname!r} is a fixed joint '
                        '(only moving joints can mimic or be mimicked)'
                    )
            raw[follower] = Mimic(leader, mult, off)
        resolved = {}
        for follower in sorted(raw, key=lambda f: self.keys.q_id[f]):
            leader, mult, off = raw[follower]
            seen = [follower]
            while leader in raw:  # q_f = m (m2 q_l2 + o2) + o
                if leader in seen:
                    raise ModelError(
                        f'mimic joints {seen} form a cycle: no joint among them is independent'
                    )
                seen.append(leader)
                nxt = raw[leader]
                leader, mult, off = nxt.leader, mult * nxt.multiplier, mult * nxt.offset + off
            resolved[follower] = Mimic(leader, mult, off)
        return resolved

    # -- what has no mass (singular generalized inertia) ----------------------------------
    def _subtree_sums(self):
        """(mass, sum |inertia|) of each link's subtree, (n,) each."""
        n = self.n_links_joints
        sub_mass = np.array([float(link.mass) for link in self.links])
        sub_inertia = np.array(
            [np.abs(np.asarray(link.inertia, float)).sum() for link in self.links]
        )
        for i in range(n - 1, -1, -1):
            p = self.parent[i]
            if p > 0:
                sub_mass[p - 1] += sub_mass[i]
                sub_inertia[p - 1] += sub_inertia[i]
        return sub_mass, sub_inertia

    def massless_joints(self):
        """
        Return {moving joint name: [links it moves]} for the joints whose columns of H are zero.

        Those are the moving joints that move nothing with mass (prismatic) or with mass or inertia
        (revolute).
        """
        if self.symbolic:
            return {}
        sub_mass, sub_inertia = self._subtree_sums()
        out = {}
        for j in self.joints:
            i = j.child_link - 1
            if (
                j.type == PRISMATIC
                and sub_mass[i] <= 0
                or j.type == REVOLUTE
                and sub_mass[i] <= 0
                and sub_inertia[i] <= 0
            ):
                out[j.name] = [link.name for link in self.links if self.con.branch[link.id - 1, i]]
        return out

    def massless_base_cluster(self):
        """
        Return the base cluster and its joints when it is massless as a floating base.

        ([base link and the links welded to it], [moving joints leaving them]) when that rigid
        cluster has no mass and a joint can move it without moving any mass as a floating base: a
        prismatic joint (the cluster slides against it), or a revolute joint when the cluster has
        no inertia either (it spins against it); else ([], []).
        """
        if self.symbolic:
            return [], []
        cluster = {0}
        for j in self.joints:  # depth-first order: parents come first
            if j.type == FIXED and j.parent_link in cluster:
                cluster.add(j.child_link)
        bodies = [self.base_link] + self.links
        if any(float(bodies[k].mass) > 0 for k in cluster):
            return [], []
        spins = not any(np.abs(np.asarray(bodies[k].inertia, float)).sum() > 0 for k in cluster)
        moving = [
            j.name
            for j in self.joints
            if j.parent_link in cluster and (j.type == PRISMATIC or j.type == REVOLUTE and spins)
        ]
        return ([bodies[k].name for k in sorted(cluster)], moving) if moving else ([], [])

    def model_scale(self):
        """
        Return (largest magnitude in the numeric model, 'link NAME' or 'joint NAME' holding it).

        Over masses, inertias and frames; (0.0, '') for a symbolic robot. For an overflow's
        message: computed on each call (O(n), an error path), so it follows later changes of the
        model.
        """
        scale = (0.0, '')
        if self.symbolic:
            return scale
        parts = [
            (f'link {b.name!r}', (b.mass, b.inertia, b.T)) for b in [self.base_link] + self.links
        ] + [(f'joint {j.name!r}', (j.T,)) for j in self.joints]
        for what, values in parts:
            m = max(float(np.abs(np.asarray(v, dtype=float)).max()) for v in values)
            if m > scale[0]:
                scale = (m, what)
        return scale

    def check_floating_base(self):
        """Raise SingularModelError if the floating-base H is singular (massless whole tree)."""
        if not self.symbolic and float(self.total_mass) <= 0:
            raise SingularModelError(
                f'robot {self.name!r} has zero total mass: a floating base with no mass '
                'has a singular generalized inertia matrix (use a fixed base)'
            )


# --- checks of model values (every way of building a Robot passes through them) ----------------


def model_array(what, x, shape, error=ModelError):
    """
    Return ``x`` as an array of ``shape``.

    float64 (real, finite), or an object array of sympy expressions or exact sympy numbers (checked
    finite, kept exact); ``error`` (a ModelError) with a message starting with ``what`` otherwise.
    A vector may be given as a (k, 1) column.
    """
    if len(shape) == 1 and _shape_of(x) == (shape[0], 1):  # a column (SPART's MATLAB vectors)
        x = np.asarray(x)[:, 0]
    try:
        a = chk.array(what, x, shape)
    except InputError as err:
        raise error(str(err)) from None
    if a.dtype == object and not any(hasattr(e, 'free_symbols') for e in a.flat):
        a = a.astype(
            np.float64
        )  # plain Python numbers (checked by chk.array); sympy ones stay exact
    return a


def _shape_of(x):
    try:
        return np.shape(x)
    except ValueError:  # ragged: model_array says so
        return None


def rigid_transform(what, T):
    """
    Return ``T`` checked as a 4x4 rigid transform (``what`` names it in errors).

    Bottom row [0, 0, 0, 1], rotation block a rotation within the API's tolerance (R'R - I within
    1e-3, det > 0); symbolic ones: the shape only.
    """
    exact = model_array(what, T, (4, 4))
    if chk.has_symbols(exact):
        return exact
    a = exact.astype(np.float64)  # exact sympy numbers: checked through their values
    if not np.array_equal(a[3], [0.0, 0.0, 0.0, 1.0]):
        raise ModelError(
            f'{what}: expected a rigid transform (4x4, bottom row [0, 0, 0, 1]), got bottom row '
            f'{a[3].tolist()}'
        )
    try:
        chk.rotation(f'{what} (its rotation block)', np.ascontiguousarray(a[:3, :3]))
    except InputError as err:
        raise ModelError(str(err)) from None
    return exact


def _numeric_transform(what, T):
    """Return a numeric rigid transform (float64 (4, 4)); ModelError naming ``what``."""
    T = rigid_transform(what, T)
    try:
        return np.array(T, dtype=float)
    except (TypeError, ValueError):
        raise ModelError(f'{what}: expected numbers, got symbolic values') from None


def body_mass(what, mass, error=InertiaError):
    """
    Return a mass: a finite real number (float) >= 0, or a sympy expression.

    ``error`` naming ``what``.
    """
    try:
        m = chk.scalar(what, mass)
    except InputError as err:
        text = str(err)
        raise error(
            text.replace('expected a finite number', 'is not finite, expected a finite number')
        ) from None
    if isinstance(m, float) and m < 0:
        raise error(
            f'{what} {m:g} kg is negative: no body has a negative mass (forward dynamics with one '
            'is meaningless), so it is refused even without strict=True'
        )
    return m


def check_limits(what, limits):
    """
    ``ModelError`` naming the joint (``what``) unless ``limits`` is a JointLimits of real numbers.

    +-inf for a bound not given; NaN is an error.
    """
    if not isinstance(limits, JointLimits):
        raise ModelError(
            f'{what}: limits: expected JointLimits(lower, upper, effort, velocity), got '
            f'{chk.given(limits)}'
        )
    for key in ('lower', 'upper', 'effort', 'velocity'):
        v = getattr(limits, key)
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real) or math.isnan(v):
            raise ModelError(
                f'{what}: limits.{key}: expected a number (+-inf when not bounded), got '
                f'{chk.given(v)}'
            )


def _check_arguments(name, base_link, links, joints, origin, mimic, strict, base_hint, world_link):
    """
    Return the Robot constructor's arguments: types (ModelError naming the argument).

    Returns (links, joints) as lists.
    """

    def refuse(arg, expected, got):
        raise ModelError(f'{arg}: expected {expected}, got {chk.given(got)}')

    if not isinstance(name, str):
        refuse('name', "the robot's name (a string)", name)
    if not isinstance(origin, str):
        refuse('origin', "where the model came from (a string: 'urdf', 'DH', 'manual')", origin)
    if not isinstance(base_link, BaseLink):
        refuse('base_link', 'a BaseLink', base_link)
    parts = []
    for arg, items, cls in (('links', links, Link), ('joints', joints, Joint)):
        if isinstance(items, (str, bytes, dict)) or not hasattr(items, '__iter__'):
            refuse(arg, f'a list of {cls.__name__}', items)
        parts.append(list(items))
        for k, item in enumerate(parts[-1]):
            if not isinstance(item, cls):
                refuse(f'{arg}[{k}]', f'a {cls.__name__}', item)
    if mimic is not None and not isinstance(mimic, dict):
        refuse('mimic', '{follower joint name: Mimic(leader, multiplier, offset)} or None', mimic)
    if not isinstance(
        strict, (bool, np.bool_, numbers.Real)
    ):  # a number counts by its truth value
        refuse('strict', 'True or False', strict)
    if not (
        base_hint is None or isinstance(base_hint, str) and base_hint in ('floating', 'fixed')
    ):
        refuse('base_hint', "None, 'floating' or 'fixed'", base_hint)
    if world_link is not None and not isinstance(world_link, str):
        refuse('world_link', 'a link name or None', world_link)
    return parts


def _exact(a):
    """Object array with integral floats (0.0, 1.0, -1.0...) replaced by exact sympy Integers."""
    import sympy

    out = np.empty(np.shape(a), dtype=object)
    for idx, v in np.ndenumerate(np.asarray(a, dtype=object)):
        out[idx] = (
            sympy.Integer(int(v))
            if isinstance(v, (float, int, np.number)) and float(v).is_integer()
            else sympy.sympify(v)
        )
    return out


def _compose(A, B):
    """
    Return a @ B.

    With an object (symbolic or exact) operand, both made exact first: a float 1.0 of a default
    frame times sqrt(2)/2 would give the Float 0.5*sqrt(2).
    """
    if A.dtype == object or B.dtype == object:
        return _exact(A) @ _exact(B)
    return A @ B


def _exact_model(robot):
    """Make every array of a symbolic model exact, so that no 1.0 leaks into expressions."""
    b = robot.base_link
    b.inertia, b.T = _exact(b.inertia), _exact(b.T)
    for link in robot.links:
        link.inertia, link.T = _exact(link.inertia), _exact(link.T)
    for joint in robot.joints:
        joint.axis, joint.T = _exact(joint.axis), _exact(joint.T)


def inertia_problems(inertia, rtol=INERTIA_RTOL):
    """
    Return what makes a symmetric (3, 3) inertia tensor impossible for a rigid body.

    Beyond rounding: a list of sentences (empty when fine). Tolerance: ``rtol`` times the largest
    principal moment (so a 1e-6 placeholder breaking the triangle inequality by 1e-22 passes).
    """
    moments = np.linalg.eigvalsh(np.asarray(inertia, dtype=float))
    tol = rtol * max(np.abs(moments).max(), 1e-300)
    problems = []
    shown = '[' + ', '.join(f'{m:.6g}' for m in moments) + ']'
    if moments[0] < -tol:
        problems.append(f'is not positive semi-definite (principal moments {shown})')
    elif moments[0] + moments[1] < moments[2] - tol:
        problems.append(
            f'has principal moments {shown} that break the triangle inequality (I1 + I2 >= I3)'
        )
    return problems


def check_mass_inertia(name, mass, inertia, strict=False):
    """
    Check the mass and inertia (about its CoM) of the body ``name``.

    InertiaError if the mass is negative (never physical, so refused even without
    ``strict``; Pinocchio loads it) or not finite, or the tensor is not a finite
    symmetric (3, 3) matrix.  A tensor no rigid body has (not positive semi-definite, or
    principal moments breaking the triangle inequality, beyond :data:`INERTIA_RTOL`) is used
    as given with an :class:`InertiaWarning` naming the link and values, as SPART and
    Pinocchio do (planar models such as SPART's ManiSat have moments [0, 0, Izz]);
    ``strict=True`` makes it an InertiaError.
    """
    body_mass(f'link {name!r}: mass', mass)
    inertia = model_array(f'link {name!r}: inertia', inertia, (3, 3), InertiaError)
    scale = max(np.abs(inertia).max(), 1e-300)
    if np.abs(inertia - inertia.T).max() > 1e-9 * scale:
        raise InertiaError(f'link {name!r}: inertia tensor is not symmetric')
    problems = inertia_problems(inertia)
    if not problems:
        return
    i = inertia
    values = (
        f'ixx={i[0, 0]:.6g} iyy={i[1, 1]:.6g} izz={i[2, 2]:.6g} ixy={i[0, 1]:.6g} '
        f'ixz={i[0, 2]:.6g} iyz={i[1, 2]:.6g}'
    )
    message = f'link {name!r}: inertia ({values}) {problems[0]}: no rigid body has this inertia'
    if strict:
        raise InertiaError(message)
    warnings.warn(
        message + '; used as given (strict=True refuses it)', InertiaWarning, stacklevel=3
    )


def homogeneous(R=None, p=None):
    """
    Return the 4x4 transform of the rotation ``R`` (3, 3) and translation ``p`` (3,).

    Object dtype if symbolic (the defaults are integer so that symbolic transforms stay exact).
    """
    R = np.eye(3, dtype=int) if R is None else R
    p = np.zeros(3, dtype=int) if p is None else p
    T = bk.eye(4, R, p)
    T[:3, :3] = R
    T[:3, 3] = p
    return T


def inverse_transform(T):
    """Return the inverse of a 4x4 rigid transform ``T`` (R' and -R' p)."""
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
    dynamics: JointDynamics = field(default_factory=JointDynamics)


class RobotBuilder:
    """
    Build a robot named ``name`` by hand, link by link, in URDF terms (frames at link origins).

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
        self.name = _name('name', name, 'robot')
        self._links = {}
        self._joints = []

    def add_link(self, name, mass, inertia, com=None):
        """
        Add a link; return this builder.

        ``name``: the link's; ``mass`` [kg] (>= 0), ``inertia`` (3, 3) about the CoM in the CoM
        frame, ``com`` the CoM
        frame in the link frame (4x4 rigid transform; None = identity). Every argument is checked
        here (ModelError naming the link and the argument).
        """
        name = _name('name', name, 'link')
        if name in self._links:
            raise ModelError(f'link {name!r} is defined twice')
        what = f'link {name!r}'
        mass = body_mass(f'{what}: mass', mass)
        inertia = model_array(f'{what}: inertia', inertia, (3, 3), InertiaError)
        com = np.eye(4) if com is None else rigid_transform(f'{what}: com', com)
        self._links[name] = _LinkSpec(name, mass, inertia, com)
        return self

    def add_joint(
        self,
        name,
        type,
        parent,
        child,
        origin=None,
        axis=None,
        limits=None,
        mimic=None,
        dynamics=None,
    ):
        """
        Add a joint; return this builder.

        ``name``: the joint's; ``type`` 'fixed', 'revolute', 'continuous', 'prismatic' (or 0, 1,
        2), ``parent``/``child``
        link names, ``origin`` the joint frame in the parent link frame (4x4 rigid transform; None
        = identity), ``axis`` (3,) in the joint frame (normalized at build; default x), ``limits``
        a :class:`JointLimits`, ``mimic`` (leader, multiplier, offset), ``dynamics`` a
        :class:`JointDynamics` (damping, friction, armature). Every argument is checked here
        (ModelError naming the joint and the argument); the link names when the robot is built.
        """
        name = _name('name', name, 'joint')
        what = f'joint {name!r}'
        if isinstance(type, str):
            if type not in JOINT_TYPES:
                raise UnsupportedJointError(
                    f'joint {name!r}: type {type!r} is not supported (SPART joints are fixed, '
                    'revolute, continuous and prismatic; model a planar or floating joint as a '
                    'chain of those)'
                )
            type = JOINT_TYPES[type]
        elif (
            isinstance(type, (bool, np.bool_))
            or not isinstance(type, (int, np.integer))
            or type not in JOINT_TYPE_NAMES
        ):
            raise UnsupportedJointError(
                f'{what}: type: expected fixed, revolute, continuous or prismatic '
                f'(or 0, 1, 2), got {chk.given(type)}'
            )
        type = int(type)
        if any(j.name == name for j in self._joints):
            raise ModelError(f'joint {name!r} is defined twice')
        parent, child = (
            _name(f'{what}: parent', parent, 'link'),
            _name(f'{what}: child', child, 'link'),
        )
        origin = np.eye(4) if origin is None else rigid_transform(f'{what}: origin', origin)
        if axis is None:
            axis = np.zeros(3) if type == FIXED else np.array([1.0, 0.0, 0.0])
        axis = model_array(f'{what}: axis', axis, (3,))
        if type != FIXED and axis.dtype != object:
            axis = _unit_axis(what, axis)  # a zero axis: refused here, at the call that gave it
        limits = JointLimits() if limits is None else limits
        check_limits(what, limits)
        dynamics = check_joint_dynamics(what, JointDynamics() if dynamics is None else dynamics)
        self._joints.append(
            _JointSpec(
                name,
                type,
                parent,
                child,
                origin,
                axis,
                limits,
                None if mimic is None else _mimic(what, mimic),
                dynamics,
            )
        )
        return self

    def build(self, strict=False):
        """
        Return the Robot.

        ``strict=True``: a non-physical inertia is an error, not a warning.
        """
        try:
            strict = chk.flag('strict', strict)
        except InputError as err:
            raise ModelError(str(err)) from None
        return _build_tree(self.name, list(self._links.values()), self._joints, strict=strict)


def _name(what, x, kind):
    """Return a link or joint name: a non-empty string; ModelError naming ``what`` otherwise."""
    if isinstance(x, str) and x:
        return x
    raise ModelError(f'{what}: expected a {kind} name (a non-empty string), got {chk.given(x)}')


def _mimic(what, mimic):
    """``mimic`` as a Mimic(leader name, finite multiplier, finite offset)."""
    if isinstance(mimic, (str, bytes, dict)) or not hasattr(mimic, '__len__') or len(mimic) != 3:
        raise ModelError(
            f'{what}: mimic: expected (leader joint name, multiplier, offset), got '
            f'{chk.given(mimic)}'
        )
    leader = _name(f'{what}: mimic leader', mimic[0], 'joint')
    try:
        return Mimic(
            leader,
            chk.scalar(f'{what}: mimic multiplier', mimic[1]),
            chk.scalar(f'{what}: mimic offset', mimic[2]),
        )
    except InputError as err:
        raise ModelError(str(err)) from None


def _unit_axis(what, axis):
    """
    Return a non-zero float axis (3,) scaled to unit length; ModelError if zero.

    It is scaled by its largest entry first, so that neither 1e200 nor 1e-200 entries overflow or
    underflow. A warning when it was not unit already (URDF axes are unit vectors).
    """
    big = float(np.abs(axis).max())
    if big == 0.0 or big < 1e-12:
        raise ModelError(
            f'{what}: axis {axis.tolist()} has zero length (a moving joint needs a direction)'
        )
    scaled = axis / big
    unit = scaled / math.sqrt(math.fsum(v * v for v in scaled.tolist()))
    if np.abs(unit - axis).max() > 1e-9:
        warnings.warn(
            f'{what}: axis {axis.tolist()} normalized (URDF axes are unit vectors)',
            ModelWarning,
            stacklevel=3,
        )
        return unit
    return axis


def _check_unique(kind, names, robot_name):
    """``ModelError`` naming the names given more than once."""
    seen, twice = set(), []
    for n in names:
        if n in seen and n not in twice:
            twice.append(n)
        seen.add(n)
    if twice:
        raise ModelError(
            f'robot {robot_name!r}: {kind} names {twice} are defined more than once '
            f'({kind} names must be unique)'
        )


def _build_tree(name, link_specs, joint_specs, origin='manual', **robot_options):
    """
    Make a Robot of a tree of URDF-style specs, numbered depth-first (checks topology).

    ``robot_options`` go to :class:`Robot` (strict, base_hint...).
    """
    _check_unique('link', [link.name for link in link_specs], name)
    _check_unique('joint', [j.name for j in joint_specs], name)
    links = {link.name: link for link in link_specs}
    if not links:
        raise TopologyError(f'robot {name!r} has no links')
    children = {link_name: [] for link_name in links}
    parent_of = {}
    for j in joint_specs:
        for role, lname in (('parent', j.parent), ('child', j.child)):
            if lname not in links:
                raise TopologyError(f'joint {j.name!r}: {role} link {lname!r} is not defined')
        if j.child in parent_of:
            raise TopologyError(
                f'link {j.child!r} has two parent joints ({parent_of[j.child].name!r} and '
                f'{j.name!r}): a kinematic tree needs exactly one'
            )
        parent_of[j.child] = j
        children[j.parent].append(j)
    roots = [link_name for link_name in links if link_name not in parent_of]
    if len(roots) != 1:
        if not roots:
            raise TopologyError(
                f'robot {name!r}: every link has a parent, the joints form a cycle'
            )
        raise TopologyError(
            f'robot {name!r} has {len(roots)} root links {roots}: a kinematic tree has exactly '
            'one (connect them with joints)'
        )
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
            axis = (
                js.axis
                if bk.is_symbolic(js.axis)
                else _unit_axis(f'joint {js.name!r}', np.asarray(js.axis, dtype=float))
            )
        else:
            axis = js.axis
        out_joints.append(
            Joint(
                k,
                js.name,
                js.type,
                q if js.type != FIXED else -1,
                id_of[js.parent],
                k,
                axis,
                _compose(inverse_transform(com_of[js.parent]), js.origin),
                js.limits,
                js.dynamics if js.type != FIXED else JointDynamics(),
            )
        )
        out_links.append(Link(k, child.name, k, child.mass, child.inertia, child.com))
        com_of[child.name] = child.com
        id_of[child.name] = k
        stack.extend(reversed(children[child.name]))
    unreached = [link_name for link_name in links if link_name not in id_of]
    if unreached:
        raise TopologyError(
            f'links {unreached} are not connected to the root {root.name!r} (the joints form a '
            'cycle)'
        )
    mimic = {j.name: j.mimic for j in joint_specs if j.mimic is not None}
    return Robot(name, base, out_links, out_joints, origin=origin, mimic=mimic, **robot_options)
