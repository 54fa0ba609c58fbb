"""
Exudyn's kinematicTree module (Featherstone's 6x6 formulation) under its own names.

For porting scripts that use ``exudyn.kinematicTree`` (``from spart_ros import kinematic_tree as
kt``): same names, arguments, order and results as Exudyn 1.13's module, computed on the
project's core through :mod:`spart_ros.spatial_v2` (a tree here is a spatial_v2 model, whose
dynamics run on the compiled fast path).

Exudyn's conventions, kept:

- joint types 'Rx', 'Ry', 'Rz' (revolute), 'Px', 'Py', 'Pz' (prismatic) about the joint frame's
  axes; ``listOfParents`` 0-based with -1 for the base (an empty list: a chain);
- 6x6 transforms and inertias in Pluecker coordinates [rotation; translation] as Featherstone
  writes them: ``listOfTransformations[i]`` (``XL(i)``) takes the parent link's coordinates to
  joint i's frame (spatial_v2's Xtree), ``listOfInertias[i]`` is
  ``MassCOMinertia2T66(mass, com, inertia)`` (= [I + m C C', m C; m C', m 1], C = skew(com),
  inertia about the CoM) in joint i's coordinates;
- KinematicTree33's ``listOfRotations[i]`` A and ``listOfOffsets[i]`` p: A is joint i's frame's
  orientation in the previous frame (the transpose of the 6x6 form's rotation block) and p its
  origin there; ``listOfInertia3D`` about the joint frame's origin (not the CoM),
  ``listOfCOM``, ``listOfMass``;
- ``ComputeMassMatrixAndForceTerms`` returns ``[M, f]`` with M q_tt + f = tau: f holds gravity
  (``gravity`` (3,), world frame, default [0, 0, -9.81]), the velocity terms and the external
  forces, which enter f with Exudyn's sign: ``externalForces[i]`` ((6,) [torque; force] about
  the world origin, in world coordinates, or a (6, k) matrix whose columns are summed) is added
  to link i's force as Exudyn adds it (the opposite of spatial_v2's ``f_ext``).

Where this module differs from Exudyn (each is a defect of Exudyn's Python module, which its
KinematicTree33 and its C++ ObjectKinematicTree do not share; docs/coming_from_exudyn.md):

- a prismatic joint moves its link by +q along its axis in both classes.  Exudyn's
  KinematicTree66 (through ``JointTransformMotionSubspace66``, which uses
  ``TranslationX2T66Inverse(q)``) moves it by -q while its motion subspace says +q, so its
  M and f at q are the ones here at q with the prismatic coordinates negated;
- KinematicTree33's mass matrix uses each prismatic joint's composite mass (Exudyn's uses the
  last link's mass there, a leftover loop variable);
- external forces reach every link (Exudyn's ``AddExternalForces`` multiplies the transforms of
  links below the first element by element); ``ForwardDynamicsCRB`` takes ``forces`` in the
  same format (Exudyn raises "not implemented"), KinematicTree33 takes ``externalForces`` too.

Fields are stored read-only (tuples of read-only arrays), so set a whole list again to change
a tree (``tree.inertias = [...]``).  Bad input raises :class:`~spart_ros.core.errors.InputError`
or ModelError (both ValueErrors, as Exudyn's checks raise) naming the list and the link.
:func:`lists_from_urdf` turns a URDF robot into these lists.
"""

from collections.abc import Mapping

import numpy as np

from . import spatial_v2 as sv
from .core import checks as chk
from .core.errors import InputError, ModelError
from .core.model import Robot
from .core.urdf import robot_from_urdf

__all__ = [
    'RotationX2T66Inverse',
    'RotationY2T66Inverse',
    'RotationZ2T66Inverse',
    'TranslationX2T66Inverse',
    'TranslationY2T66Inverse',
    'TranslationZ2T66Inverse',
    'MassCOMinertia2T66',
    'Inertia2T66',
    'Inertia66toMassCOMinertia',
    'JointTransformMotionSubspace66',
    'JointTransformMotionSubspace',
    'CRM',
    'CRF',
    'KinematicTree33',
    'KinematicTree66',
    'lists_from_urdf',
]

_TYPES = ('Rx', 'Ry', 'Rz', 'Px', 'Py', 'Pz')


def RotationX2T66Inverse(angle):
    """Return the 6x6 transform to a frame rotated by ``angle`` [rad] about x (Xrotx)."""
    return sv.Xrotx(angle)


def RotationY2T66Inverse(angle):
    """Return the 6x6 transform to a frame rotated by ``angle`` [rad] about y (Xroty)."""
    return sv.Xroty(angle)


def RotationZ2T66Inverse(angle):
    """Return the 6x6 transform to a frame rotated by ``angle`` [rad] about z (Xrotz)."""
    return sv.Xrotz(angle)


def TranslationX2T66Inverse(translation):
    """Return Exudyn's 6x6 transform of ``translation`` [m] along x: Xtrans([-t, 0, 0])."""
    return sv.Xtrans([-chk.scalar('translation', translation), 0.0, 0.0])


def TranslationY2T66Inverse(translation):
    """Return Exudyn's 6x6 transform of ``translation`` [m] along y: Xtrans([0, -t, 0])."""
    return sv.Xtrans([0.0, -chk.scalar('translation', translation), 0.0])


def TranslationZ2T66Inverse(translation):
    """Return Exudyn's 6x6 transform of ``translation`` [m] along z: Xtrans([0, 0, -t])."""
    return sv.Xtrans([0.0, 0.0, -chk.scalar('translation', translation)])


def MassCOMinertia2T66(mass, centerOfMass, inertia):
    """
    Return the 6x6 inertia of ``mass`` [kg] at ``centerOfMass`` (3,) with ``inertia`` (3, 3).

    ``inertia`` is about the CoM; the result is about the frame's origin (spatial_v2's mcI).
    """
    return sv.mcI(mass, centerOfMass, inertia)


def Inertia2T66(inertia):
    """
    Return the 6x6 inertia of an Exudyn ``RigidBodyInertia`` (or any object like it).

    ``inertia``: has ``mass``, ``com`` (3,) and ``InertiaCOM()`` (3, 3) (the tensor about the CoM).
    """
    try:
        mass, com, about_com = inertia.mass, inertia.com, inertia.InertiaCOM()
    except AttributeError:
        raise InputError(
            'inertia: expected a RigidBodyInertia (mass, com and InertiaCOM()), got '
            f'{chk.given(inertia)}; for mass, CoM and tensor use MassCOMinertia2T66'
        ) from None
    return sv.mcI(mass, com, about_com)


def Inertia66toMassCOMinertia(inertia66):
    """
    Return ``[mass, centerOfMass, inertia]`` of a 6x6 inertia ``inertia66``.

    ``inertia`` is about the CoM; a massless body has its CoM at the origin here (Exudyn divides
    by the zero mass).
    """
    m, c, inertia = sv.mcI(inertia66)
    return [m, c, inertia]


def JointTransformMotionSubspace66(jointType, q):
    """
    Return ``[T, MS]``: the 6x6 joint transform and motion subspace (6,) of ``jointType`` at ``q``.

    As spatial_v2's jcalc: a prismatic joint displaces by +q along MS (Exudyn's by -q, module
    docstring).
    """
    Xj, S = sv.jcalc(_joint_type('jointType', jointType), q)
    return [Xj, S]


def JointTransformMotionSubspace(jointType, q):
    """
    Return ``[A, v, rotAxis, transAxis]`` of ``jointType`` at ``q`` (KinematicTree33's form).

    A (3, 3) takes the previous frame's coordinates to the joint's (the transpose of the joint's
    rotation; the identity for a prismatic joint), v (3,) the prismatic displacement q along its
    axis (zero for a revolute joint), rotAxis and transAxis (3,) the joint's axis in its
    rotational or translational part.
    """
    code = _joint_type('jointType', jointType)
    Xj, S = sv.jcalc(code, q)
    if code[0] == 'R':
        return [Xj[:3, :3], np.zeros(3), S[:3], np.zeros(3)]
    return [np.eye(3), S[3:] * chk.scalar('q', q), np.zeros(3), S[3:]]


def CRM(v):
    """Return the 6x6 motion cross-product operator of ``v`` (6,) (spatial_v2's crm)."""
    return sv.crm(chk.vector('v', v, 6))


def CRF(v):
    """Return the 6x6 force cross-product operator of ``v`` (6,): -CRM(v)'."""
    return sv.crf(chk.vector('v', v, 6))


def _joint_type(name, value):
    if not isinstance(value, str) or value not in _TYPES:
        raise InputError(
            f"{name}: expected a joint type 'Rx', 'Ry', 'Rz', 'Px', 'Py' or 'Pz', got "
            f'{chk.given(value)}'
        )
    return value


class _Tree:
    """What both classes share: a spatial_v2 model built from the lists, and the dynamics."""

    #: the attributes a tree is built from (set again: the model is rebuilt)
    _FIELDS = ()

    def __setattr__(self, key, value):
        if key in self._FIELDS:
            value = self._check(key, value)
            object.__setattr__(self, '_model', None)
        object.__setattr__(self, key, value)

    def _jointTypes(self):
        raise NotImplementedError

    def _parent_list(self):
        raise NotImplementedError

    def _check_sizes(self, sizes):
        n = len(self._jointTypes())
        for key, size in sizes.items():
            if size != n:
                raise ModelError(
                    f'{type(self).__name__}: length of {key} ({size}) must agree with length of '
                    f'the joint types ({n})'
                )
        if n == 0:
            raise ModelError(f'{type(self).__name__}: a tree needs at least one joint')

    def Size(self):
        """Return the number of joints (the length of the joint types)."""
        return len(self._jointTypes())

    def _sv(self):
        model = self._model
        if model is None:
            model = self._build()
            object.__setattr__(self, '_model', model)
        return model

    def _build(self):
        raise NotImplementedError

    def _f_ext(self, externalForces):
        """Exudyn's external forces as spatial_v2's f_ext (negated), or None."""
        if externalForces is None or len(externalForces) == 0:
            return None
        n = self.Size()
        if len(externalForces) != n:
            raise InputError(
                f'externalForces: expected an empty list or one entry per joint ({n}), got '
                f'{len(externalForces)}'
            )
        return [-_summed(f'externalForces[{i}]', f) for i, f in enumerate(externalForces)]

    def ComputeMassMatrixAndForceTerms(self, q, q_t, externalForces=[]):  # Exudyn's defaults
        """
        Return ``[M, f]`` (n, n) and (n,) at joint coordinates ``q`` and velocities ``q_t``.

        M q_tt + f = tau; f holds gravity, the velocity terms and ``externalForces`` (module
        docstring: one (6,) [torque; force] in world coordinates per joint, or a (6, k) matrix of
        them, or an empty list).
        """
        M, f = sv.HandC(self._sv(), q, q_t, self._f_ext(externalForces))
        return [M, f]

    def ForwardDynamicsCRB(self, q=[], q_t=[], torques=[], forces=[]):  # Exudyn's defaults
        """
        Return the joint accelerations q_tt (n,): M q_tt = torques - f (composite rigid body).

        ``q``, ``q_t`` (n,); ``torques`` (n,) or an empty list (zero); ``forces``: external
        forces as :meth:`ComputeMassMatrixAndForceTerms` takes them.
        """
        n = self.Size()
        tau = np.zeros(n) if len(torques) == 0 else chk.vector('torques', torques, n)
        return sv.FDcrb(self._sv(), q, q_t, tau, self._f_ext(forces))

    def AddExternalForces(self, Xup, fvp, externalForces=[]):  # Exudyn's defaults
        """
        Return the link forces ``fvp`` plus the external forces, as a new list.

        ``Xup``: each link's 6x6 transform from its parent link (``XJ @ XL(i)``), ``fvp``: each
        link's 6D force in its own coordinates, ``externalForces``: one (6,) or (6, k) entry per
        joint in world coordinates (an empty list: none).  Link i gets Xa_i^-T f_i, Xa_i the
        transform from the world to link i (Exudyn's sign).  The inputs are not modified.
        """
        n = self.Size()
        parents = self._parent_list()
        Xup = [chk.array(f'Xup[{i}]', X, (6, 6)) for i, X in enumerate(_items('Xup', Xup, n))]
        out = [chk.vector(f'fvp[{i}]', f, 6).copy() for i, f in enumerate(_items('fvp', fvp, n))]
        if externalForces is None or len(externalForces) == 0:
            return out
        forces = _items('externalForces', externalForces, n)
        Xa = [None] * n
        for i in range(n):
            p = parents[i]
            Xa[i] = Xup[i] if p == -1 else Xup[i] @ Xa[p]
            out[i] += np.linalg.solve(Xa[i].T, _summed(f'externalForces[{i}]', forces[i]))
        return out


def _items(name, value, n):
    try:
        items = list(value)
    except TypeError:
        raise InputError(
            f'{name}: expected a list of {n} entries, got {chk.given(value)}'
        ) from None
    if len(items) != n:
        raise InputError(f'{name}: expected {n} entries (one per joint), got {len(items)}')
    return items


def _summed(name, f):
    """Return a (6,) force, or the sum of the columns of a (6, k) matrix of them."""
    a = np.asarray(f)
    if a.ndim == 2 and a.shape[0] == 6:
        return chk.array(name, a, (6, None)).sum(axis=1)
    return chk.vector(name, f, 6)


def _readonly_list(name, value, shape, check=None):
    """Return the arrays of ``value`` checked, as a tuple of read-only copies."""
    out = []
    for i, a in enumerate(_as_list(name, value)):
        what = f'{name}[{i}] (link {i})'
        a = chk.array(what, a, shape) if len(shape) > 1 else chk.vector(what, a, shape[0])
        if check is not None:
            check(what, a)
        a = np.array(a)
        a.setflags(write=False)
        out.append(a)
    return tuple(out)


def _rotation(name, A):
    if np.abs(A.T @ A - np.eye(3)).max() > 1e-6 or np.linalg.det(A) <= 0:
        raise InputError(f'{name}: expected a rotation matrix, got {A.tolist()}')


def _as_list(name, value):
    if isinstance(value, (str, Mapping)):
        raise InputError(f'{name}: expected a list, got {chk.given(value)}')
    try:
        return list(value)
    except TypeError:
        raise InputError(f'{name}: expected a list, got {chk.given(value)}') from None


def _joint_types(name, value):
    return tuple(_joint_type(f'{name}[{i}]', t) for i, t in enumerate(_as_list(name, value)))


def _parents(name, value, n):
    """Exudyn's parent list (0-based, -1 = base; empty: a chain) as a tuple."""
    value = _as_list(name, value)
    if len(value) == 0:
        return tuple(range(-1, n - 1))
    parents = []
    for i, p in enumerate(value):
        if (
            isinstance(p, (bool, np.bool_))
            or not isinstance(p, (int, np.integer, float, np.floating))
            or p != int(p)
        ):
            raise InputError(
                f'{name}[{i}]: expected a link index (an integer), got {chk.given(p)}'
            )
        p = int(p)
        if not -1 <= p < i:
            raise ModelError(
                f'{name}[{i}] = {p}: link / parent indices must be sorted such that parent '
                'indices always refer to a link with an index smaller than the current link '
                '(parent[i] < i; -1 = the base)'
            )
        parents.append(p)
    return tuple(parents)


def _gravity(value):
    g = np.array(chk.vector('gravity', value, 3))
    g.setflags(write=False)
    return g


class KinematicTree66(_Tree):
    """
    A kinematic tree in Pluecker coordinates (6x6), Exudyn's KinematicTree66.

    ``listOfJointTypes`` ('Rx' ... 'Pz'), ``listOfTransformations`` (6x6 each: parent link ->
    joint frame), ``listOfInertias`` (6x6 each, MassCOMinertia2T66), ``listOfParents`` (0-based,
    -1 = base; empty: a chain), ``gravity`` (3,) in the world frame.  Attributes as Exudyn's:
    ``jointTypes``, ``transformations``, ``inertias``, ``parents``, ``gravity``.
    """

    _FIELDS = ('jointTypes', 'transformations', 'inertias', 'parents', 'gravity')

    def __init__(
        self,
        listOfJointTypes,
        listOfTransformations,
        listOfInertias,
        listOfParents=[],  # Exudyn's defaults
        gravity=[0, 0, -9.81],  # Exudyn's defaults
    ):
        object.__setattr__(self, '_model', None)
        self.jointTypes = listOfJointTypes
        self.transformations = listOfTransformations
        self.inertias = listOfInertias
        self.parents = listOfParents
        self.gravity = gravity
        self._check_sizes(
            {
                'transformations': len(self.transformations),
                'parents': len(self.parents),
                'inertias': len(self.inertias),
            }
        )

    def _check(self, key, value):
        if key == 'jointTypes':
            return _joint_types('listOfJointTypes', value)
        if key == 'transformations':
            return _readonly_list('listOfTransformations', value, (6, 6), sv._decompose_transform)
        if key == 'inertias':
            return _readonly_list('listOfInertias', value, (6, 6), sv._decompose_inertia)
        if key == 'parents':
            return _parents('listOfParents', value, len(self.jointTypes))
        return _gravity(value)

    def _jointTypes(self):
        return self.jointTypes

    def _parent_list(self):
        return self.parents

    def XL(self, i):
        """Return link ``i``'s 6x6 transform (parent link -> joint frame)."""
        return self.transformations[i]

    def _build(self):
        self._check_sizes(
            {
                'transformations': len(self.transformations),
                'parents': len(self.parents),
                'inertias': len(self.inertias),
            }
        )
        return sv.Model(
            NB=self.Size(),
            parent=[p + 1 for p in self.parents],
            jtype=list(self.jointTypes),
            Xtree=self.transformations,
            I=self.inertias,
            gravity=self.gravity,
        )


class KinematicTree33(_Tree):
    """
    A kinematic tree with rotation matrices and offsets, Exudyn's KinematicTree33.

    ``listOfJointTypes`` ('Rx' ... 'Pz'), ``listOfRotations`` (3x3 each: joint frame's
    orientation in the previous frame), ``listOfOffsets`` (3,) each (its origin there),
    ``listOfInertia3D`` (3x3 each, about the joint frame's origin), ``listOfCOM`` (3,) each,
    ``listOfMass``, ``listOfParents`` (0-based, -1 = base; empty: a chain), ``gravity`` (3,) in
    the world frame.  Attributes as Exudyn's (``listOfJointTypes`` ... ``gravity``).
    """

    _FIELDS = (
        'listOfJointTypes',
        'listOfRotations',
        'listOfOffsets',
        'listOfInertia3D',
        'listOfCOM',
        'listOfMass',
        'listOfParents',
        'gravity',
    )

    def __init__(
        self,
        listOfJointTypes,
        listOfRotations,
        listOfOffsets,
        listOfInertia3D,
        listOfCOM,
        listOfMass,
        listOfParents=[],  # Exudyn's defaults
        gravity=[0, 0, -9.81],  # Exudyn's defaults
    ):
        object.__setattr__(self, '_model', None)
        self.listOfJointTypes = listOfJointTypes
        self.listOfRotations = listOfRotations
        self.listOfOffsets = listOfOffsets
        self.listOfInertia3D = listOfInertia3D
        self.listOfCOM = listOfCOM
        self.listOfMass = listOfMass
        self.listOfParents = listOfParents
        self.gravity = gravity
        self._check_sizes(self._sizes())

    def _sizes(self):
        return {key: len(getattr(self, key)) for key in self._FIELDS[1:-1]}

    def _check(self, key, value):
        if key == 'listOfJointTypes':
            return _joint_types(key, value)
        if key == 'listOfRotations':
            return _readonly_list(key, value, (3, 3), _rotation)
        if key == 'listOfInertia3D':
            return _readonly_list(key, value, (3, 3))
        if key in ('listOfOffsets', 'listOfCOM'):
            return _readonly_list(key, value, (3,))
        if key == 'listOfMass':
            masses = tuple(
                chk.nonnegative(f'listOfMass[{i}]', m) for i, m in enumerate(_as_list(key, value))
            )
            return masses
        if key == 'listOfParents':
            return _parents(key, value, len(self.listOfJointTypes))
        return _gravity(value)

    def _jointTypes(self):
        return self.listOfJointTypes

    def _parent_list(self):
        return self.listOfParents

    def XL(self, i):
        """Return ``[A, p]``: link ``i``'s rotation matrix and offset."""
        return [self.listOfRotations[i], self.listOfOffsets[i]]

    def _build(self):
        self._check_sizes(self._sizes())
        Xtree, inertias = [], []
        for i in range(self.Size()):
            Xtree.append(sv.plux(self.listOfRotations[i].T, self.listOfOffsets[i]))
            m, c = self.listOfMass[i], self.listOfCOM[i]
            cx = sv._skew(c)
            about_com = self.listOfInertia3D[i] - m * cx @ cx.T  # the tensor given is about p
            inertias.append(sv.mcI(m, c, about_com))
        return sv.Model(
            NB=self.Size(),
            parent=[p + 1 for p in self.listOfParents],
            jtype=list(self.listOfJointTypes),
            Xtree=Xtree,
            I=inertias,
            gravity=self.gravity,
        )


def lists_from_urdf(source, form=66, gravity=None, **options):
    """
    Return the arguments of KinematicTree66 (``form=66``) or KinematicTree33 (33) of a URDF robot.

    A dict: ``KinematicTree66(**lists_from_urdf('robot.urdf'))``.  ``source``: a URDF path or text
    (:func:`spart_ros.core.urdf.robot_from_urdf`, which takes ``options``), or a
    :class:`~spart_ros.core.model.Robot`; its root link is the fixed base.  Links on fixed joints
    are merged into the link they are welded to; joint frames are turned so that each axis is
    the type's (``spatial_v2.model_from_robot``); joint i is the robot's i-th moving joint
    (``robot.q_names``).  ``gravity`` (3,) in the root link's frame, or in the ``world`` frame
    of a ``world`` root fixed to it (None: [0, 0, -9.81]).
    """
    robot = source if isinstance(source, Robot) else robot_from_urdf(source, **options)[0]
    if form not in (33, 66, '33', '66'):
        raise InputError(
            f'form: expected 66 (KinematicTree66) or 33 (KinematicTree33), got {form!r}'
        )
    model = sv.model_from_robot(robot, gravity)
    parents = [p - 1 for p in model.parent]
    g = list(model.gravity)  # in the root link's frame
    types = list(model.jtype)
    if int(form) == 66:
        return {
            'listOfJointTypes': types,
            'listOfTransformations': [np.array(X) for X in model.Xtree],
            'listOfInertias': [np.array(I6) for I6 in model.I],
            'listOfParents': parents,
            'gravity': g,
        }
    out = {
        'listOfJointTypes': types,
        'listOfRotations': [],
        'listOfOffsets': [],
        'listOfInertia3D': [],
        'listOfCOM': [],
        'listOfMass': [],
        'listOfParents': parents,
        'gravity': g,
    }
    for X, I6 in zip(model.Xtree, model.I):
        E, r = sv.plux(X)
        m, c, _ = sv.mcI(I6)
        out['listOfRotations'].append(E.T)
        out['listOfOffsets'].append(r)
        out['listOfInertia3D'].append(np.array(I6[:3, :3]))
        out['listOfCOM'].append(c)
        out['listOfMass'].append(m)
    return out
