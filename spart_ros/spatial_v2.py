"""
Featherstone's spatial_v2 under its own names, and his course's tree sets and HCcalc.

For porting spatial_v2 scripts line by line (``from spart_ros import spatial_v2 as sv``).
Same names, arguments, order and results as spatial_v2 (Featherstone's MATLAB package that
accompanies *Rigid Body Dynamics Algorithms*); MATLAB columns are 1-D arrays, cell arrays are
lists (entry i - 1 belongs to body i), bodies are numbered 1..NB with 0 the fixed base.

Spatial vectors are Pluecker coordinates [angular; linear]: a motion [omega; v_O] (v_O the
velocity of the body point at the frame's origin O), a force [n_O; f] (n_O the moment about O).
``X = plux(E, r)`` = [E 0; -E rx E] is the coordinate transform from frame A to a frame B whose
origin is at ``r`` (A coordinates) and whose axes are rotated so that ``E`` takes A coordinates
to B coordinates (E = R_AB', the transpose of B's orientation in A).

The system model (:class:`Model`, or a dict of the same fields): ``NB`` bodies, ``parent`` (NB,)
with parent[i - 1] < i the parent of body i (0 = the fixed base), ``jtype`` (NB,) joint codes
'Rx', 'Ry', 'Rz' (= 'R'), 'Px', 'Py', 'Pz' (= 'P'), or ``{'code': 'H', 'pars': {'pitch': h}}``
(helical about z), ``Xtree`` (NB,) of (6, 6): body parent(i) coordinates -> the predecessor
frame of joint i, ``I`` (NB,) of (6, 6): body i's spatial inertia in body i coordinates
(:func:`mcI`), ``gravity`` (3,) in base coordinates (default [0, 0, -9.81]).

The dynamics run on the project's core, not on a copy of spatial_v2's loops: a model is built
once into a :class:`~spart_ros.core.model.Robot` (body i = link ``body<i>``, joint i = joint
``joint<i>``; a helical joint is a revolute joint and a prismatic joint mimicking it) and its
compiled fast path (:class:`~spart_ros.core.fast.FastDynamics`, fixed base):

=========================  =================================================================
ID(model, q, qd, qdd, f)   ``inverse_dynamics`` (recursive Newton-Euler)
HandC(model, q, qd, f)     ``mass_matrix`` (composite rigid body) and ``bias_forces`` (RNEA)
FDab(model, q, qd, tau, f) ``forward_dynamics`` (articulated body)
FDcrb(model, ...)          HandC, then a Cholesky solve of H qdd = tau - C
HCcalc(model, q, qd, f)    the course's H and C from inverse dynamics alone (one ID call for
                           C, one per column of H): equals HandC
=========================  =================================================================

``f_ext``: None, an empty list, or a list of NB entries, each None / empty or the spatial force
(6,) on body i in base (absolute) coordinates; what a force does is spatial_v2's: it acts on the
body (tau = H qdd + C - J' f).  ``jcalc``, ``mcI``, the transforms, ``crm``, ``crf``, ``rq``,
``rqd`` are themselves the algorithm: written here as short formulas.

The course's tree sets take the parent array ``lam`` (``model.parent``): ``kappa`` (the joints
supporting each body, its path to the base), ``mu`` (children; entry 0: the base's), ``nu`` (the
bodies each joint supports, its subtree), ``depth`` (the number of joints between each body
and the base); entries are sorted lists of body numbers as MATLAB holds them.

Not here: planar models ('r', 'px', 'py'), ``gamma_q`` constraints, floating bases
(``floatbase``/``FDfb``: use :mod:`spart_ros.core` with ``floating=True``), showmotion.
"""

from collections.abc import Mapping
import math
from types import MappingProxyType
import warnings

import numpy as np

from .core import checks as chk
from .core.errors import InputError, MimicJointWarning, ModelError, UnsupportedJointError
from .core.fast.mimic import fast_dynamics
from .core.model import homogeneous, PRISMATIC, REVOLUTE, RobotBuilder
from .core.urdf import robot_from_urdf

__all__ = [
    'Model',
    'model_from_robot',
    'model_from_urdf',
    'ID',
    'HandC',
    'FDab',
    'FDcrb',
    'HCcalc',
    'jcalc',
    'mcI',
    'Xrotx',
    'Xroty',
    'Xrotz',
    'Xtrans',
    'rotx',
    'roty',
    'rotz',
    'xlt',
    'plux',
    'crm',
    'crf',
    'rq',
    'rqd',
    'kappa',
    'mu',
    'nu',
    'depth',
]

GRAVITY = (0.0, 0.0, -9.81)  # spatial_v2's default (get_gravity)
_AXES = {'x': 0, 'y': 1, 'z': 2}
_CODES = {'Rx': 'Rx', 'Ry': 'Ry', 'Rz': 'Rz', 'R': 'Rz', 'Px': 'Px', 'Py': 'Py', 'Pz': 'Pz'}
_CODES.update({'P': 'Pz', 'H': 'H'})
_PLANAR = ('r', 'px', 'py')
_TOL = 1e-6  # relative: the block structure of a transform or an inertia, beyond rounding
_KSTAB = 0.1  # rqd's magnitude stabilization (spatial_v2's value)


# --- 3D and spatial arithmetic ---------------------------------------------------------------


def _skew(v):
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def _unskew(S):
    return 0.5 * np.array([S[2, 1] - S[1, 2], S[0, 2] - S[2, 0], S[1, 0] - S[0, 1]])


def _blocks(E):
    X = np.zeros((6, 6))
    X[:3, :3] = X[3:, 3:] = E
    return X


def _cos_sin(theta):
    theta = chk.scalar('theta', theta)
    return math.cos(theta), math.sin(theta)


def Xrotx(theta):
    """Return the coordinate transform (6, 6) to a frame rotated by ``theta`` [rad] about x."""
    c, s = _cos_sin(theta)
    return _blocks(np.array([[1.0, 0.0, 0.0], [0.0, c, s], [0.0, -s, c]]))


def Xroty(theta):
    """Return the coordinate transform (6, 6) to a frame rotated by ``theta`` [rad] about y."""
    c, s = _cos_sin(theta)
    return _blocks(np.array([[c, 0.0, -s], [0.0, 1.0, 0.0], [s, 0.0, c]]))


def Xrotz(theta):
    """Return the coordinate transform (6, 6) to a frame rotated by ``theta`` [rad] about z."""
    c, s = _cos_sin(theta)
    return _blocks(np.array([[c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, 1.0]]))


def Xtrans(r):
    """Return the coordinate transform (6, 6) to a frame whose origin is at ``r`` (3,)."""
    X = np.eye(6)
    X[3:, :3] = -_skew(chk.vector('r', r, 3))
    return X


# spatial_v2's names of the same transforms (spatial_v1, the course's, are the X* ones)
rotx, roty, rotz, xlt = Xrotx, Xroty, Xrotz, Xtrans


def plux(E, r=None):
    """
    Return the Pluecker transform [E 0; -E rx E] (6, 6) of ``E`` (3, 3) and ``r`` (3,).

    ``plux(X)`` with one argument, a transform (6, 6), returns its ``(E, r)`` instead (InputError
    when X is not a Pluecker coordinate transform, beyond rounding).
    """
    if r is None:
        X = chk.array('X', E, (6, 6))
        E, r = _decompose_transform('X', X)
        return E, r
    E = chk.rotation('E', E)
    X = _blocks(E)
    X[3:, :3] = -E @ _skew(chk.vector('r', r, 3))
    return X


def _decompose_transform(name, X):
    """(E, r) of the Pluecker transform ``X``; InputError naming ``name`` if it is not one."""
    E = X[:3, :3]
    scale = max(1.0, float(np.abs(X).max()))
    rx = -E.T @ X[3:, :3]
    problems = []
    if np.abs(X[:3, 3:]).max() > _TOL * scale:
        problems.append('its top-right block is not zero')
    if np.abs(X[3:, 3:] - E).max() > _TOL * scale:
        problems.append('its bottom-right block is not its top-left one')
    if np.abs(E.T @ E - np.eye(3)).max() > _TOL or np.linalg.det(E) <= 0:
        problems.append('its top-left block is not a rotation')
    elif np.abs(rx + rx.T).max() > _TOL * scale:
        problems.append("E' times its bottom-left block is not skew-symmetric")
    if problems:
        raise InputError(
            f'{name}: not a Pluecker coordinate transform [E 0; -E rx E] ({"; ".join(problems)}): '
            'build it with plux(E, r), Xtrans(r) and Xrotx/Xroty/Xrotz'
        )
    return E.copy(), _unskew(rx)


def mcI(m, c=None, I=None):  # noqa: E741 (spatial_v2's argument name)
    """
    Return the spatial inertia (6, 6) of mass ``m``, CoM ``c`` (3,) and inertia ``I`` (3, 3).

    ``I`` is about the CoM; the result is [I + m cx cx', m cx; m cx', m 1] about the frame's
    origin.  ``mcI(rbi)`` with one argument, a spatial inertia (6, 6), returns its ``(m, c, I)``
    (c = 0 for a massless body; InputError when rbi is not a rigid-body inertia).
    """
    if c is None and I is None:
        rbi = chk.array('rbi', m, (6, 6))
        return _decompose_inertia('rbi', rbi)
    m = chk.nonnegative('m', m)
    cx = _skew(chk.vector('c', c, 3))
    rbi = np.empty((6, 6))
    rbi[:3, :3] = chk.array('I', I, (3, 3)) + m * cx @ cx.T
    rbi[:3, 3:] = m * cx
    rbi[3:, :3] = m * cx.T
    rbi[3:, 3:] = 0.0
    rbi[3, 3] = rbi[4, 4] = rbi[5, 5] = m
    return rbi


def _decompose_inertia(name, rbi):
    """(m, c, I about the CoM) of the spatial inertia ``rbi``; InputError naming ``name``."""
    scale = max(1e-300, float(np.abs(rbi).max()))
    m = float(rbi[5, 5])
    mc = rbi[:3, 3:]
    problems = []
    if np.abs(rbi - rbi.T).max() > _TOL * scale:
        problems.append('it is not symmetric')
    if m < 0 or np.abs(rbi[3:, 3:] - m * np.eye(3)).max() > _TOL * scale:
        problems.append('its bottom-right block is not m 1 with m >= 0')
    if np.abs(mc + mc.T).max() > _TOL * scale:
        problems.append('its top-right block is not skew-symmetric (m cx)')
    elif m == 0 and np.abs(mc).max() > _TOL * scale:
        problems.append('a massless body with a first moment')
    if problems:
        raise InputError(
            f'{name}: not a rigid-body spatial inertia ({"; ".join(problems)}): build it with '
            'mcI(m, c, I)'
        )
    if m == 0:
        return 0.0, np.zeros(3), rbi[:3, :3].copy()
    return m, _unskew(mc) / m, rbi[:3, :3] - mc @ mc.T / m


def crm(v):
    """
    Return the motion cross-product operator of ``v`` (its product with a motion m is v x m).

    ``v``: a spatial motion (6,) -> (6, 6), or a planar one (3,) -> (3, 3).
    """
    if np.shape(v) in ((3,), (3, 1)):
        w, x, y = chk.vector('v', v, 3).tolist()
        return np.array([[0.0, 0.0, 0.0], [y, 0.0, -w], [-x, w, 0.0]])
    a, b, c, x, y, z = chk.vector('v', v, 6).tolist()
    return np.array(
        [
            [0.0, -c, b, 0.0, 0.0, 0.0],
            [c, 0.0, -a, 0.0, 0.0, 0.0],
            [-b, a, 0.0, 0.0, 0.0, 0.0],
            [0.0, -z, y, 0.0, -c, b],
            [z, 0.0, -x, c, 0.0, -a],
            [-y, x, 0.0, -b, a, 0.0],
        ]
    )


def crf(v):
    """Return the force cross-product operator of ``v`` (6,) or (3,), minus crm's transpose."""
    return -crm(v).T


def rq(x):
    """
    Return the coordinate transform E (3, 3) of the unit quaternion ``x`` (4,), or back.

    The quaternion [cos(t/2); sin(t/2) u] is frame B's orientation relative to A (a rotation by
    t about u); E takes A coordinates to B coordinates.  ``rq(E)`` returns the quaternion of a
    rotation matrix (first entry >= 0).  A quaternion is normalized first.
    """
    a = np.asarray(x)
    if a.shape == (3, 3):
        E = chk.rotation('E', a)
        return _quaternion_of(E)
    q = chk.vector('q', a, 4)
    norm = math.sqrt(float(q @ q))
    if norm == 0.0:
        raise InputError(
            'q: expected a quaternion [cos(t/2); sin(t/2) u] (scalar first), got zero'
        )
    q = q / norm
    q0, q1, q2, q3 = q
    return 2.0 * np.array(
        [
            [q0 * q0 + q1 * q1 - 0.5, q1 * q2 + q0 * q3, q1 * q3 - q0 * q2],
            [q1 * q2 - q0 * q3, q0 * q0 + q2 * q2 - 0.5, q2 * q3 + q0 * q1],
            [q1 * q3 + q0 * q2, q2 * q3 - q0 * q1, q0 * q0 + q3 * q3 - 0.5],
        ]
    )


def _quaternion_of(E):
    """Return the quaternion (first entry >= 0) whose coordinate transform is ``E``."""
    v = np.array([E[1, 2] - E[2, 1], E[2, 0] - E[0, 2], E[0, 1] - E[1, 0]])
    d = np.diag(E)
    t = d.sum()
    k = int(np.argmax(np.r_[t, d]))
    if k == 0:
        q = np.r_[1.0 + t, v]
    else:
        i = k - 1
        j, m = (i + 1) % 3, (i + 2) % 3
        q = np.empty(4)
        q[0] = v[i]
        q[1 + i] = 1.0 + 2.0 * d[i] - t
        q[1 + j] = E[i, j] + E[j, i]
        q[1 + m] = E[i, m] + E[m, i]
    q /= np.linalg.norm(q)
    return q if q[0] >= 0 else -q


def rqd(in1, in2):
    """
    Return the derivative (4,) of the quaternion q from an angular velocity.

    ``rqd(wA, q)``: the angular velocity ``wA`` (3,) of B relative to A in A coordinates;
    ``rqd(q, wB)``: in B coordinates (the first argument is q when it has 4 entries).  q need
    not be of unit length: the result then holds spatial_v2's stabilizing term that pulls |q|
    back to 1 when it is integrated (K = 0.1).
    """
    body = np.size(in1) == 4
    q = chk.vector('q', in1 if body else in2, 4)
    w = chk.vector('wB' if body else 'wA', in2 if body else in1, 3)
    q0, q1, q2, q3 = q.tolist()
    norm = math.sqrt(q0 * q0 + q1 * q1 + q2 * q2 + q3 * q3)
    if norm == 0.0:
        raise InputError('q: expected a quaternion, got zero')
    if body:
        Q = np.array(
            [[q0, -q1, -q2, -q3], [q1, q0, -q3, q2], [q2, q3, q0, -q1], [q3, -q2, q1, q0]]
        )
    else:
        Q = np.array(
            [[q0, -q1, -q2, -q3], [q1, q0, q3, -q2], [q2, -q3, q0, q1], [q3, q2, -q1, q0]]
        )
    wx, wy, wz = w.tolist()
    stab = _KSTAB * math.sqrt(wx * wx + wy * wy + wz * wz) * (1.0 - norm)
    return 0.5 * Q @ np.array([stab, wx, wy, wz])


# --- joints ----------------------------------------------------------------------------------


def _joint(name, jtyp):
    """(code, pitch) of a joint type: a code string or a {'code', 'pars'} structure."""
    if isinstance(jtyp, str):
        code, pars = jtyp, None
    elif isinstance(jtyp, Mapping) and 'code' in jtyp:
        code, pars = jtyp['code'], jtyp.get('pars')
    elif hasattr(jtyp, 'code'):
        code, pars = jtyp.code, getattr(jtyp, 'pars', None)
    else:
        raise InputError(
            f"{name}: expected a joint type code ('Rx', ..., 'Pz') or a structure with 'code' "
            f"(and 'pars'), got {chk.given(jtyp)}"
        )
    if code in _PLANAR:
        raise UnsupportedJointError(
            f'{name}: planar joint {code!r}: planar models are not supported here (model the '
            "plane's motion with spatial joints 'Rz', 'Px', 'Py')"
        )
    if not isinstance(code, str) or code not in _CODES:
        raise UnsupportedJointError(
            f"{name}: unrecognised joint code {code!r} (expected 'Rx', 'Ry', 'Rz', 'R', 'Px', "
            "'Py', 'Pz', 'P' or 'H' with pars.pitch)"
        )
    code = _CODES[code]
    if code != 'H':
        return code, 0.0
    pitch = pars.get('pitch') if isinstance(pars, Mapping) else getattr(pars, 'pitch', None)
    if pitch is None:
        raise InputError(
            f"{name}: a helical joint needs pars.pitch ({{'code': 'H', 'pars': "
            "{'pitch': h}}, h in m/rad)"
        )
    return code, chk.scalar(f'{name}.pars.pitch', pitch)


def jcalc(jtyp, q):
    """
    Return ``(Xj, S)``: joint transform (6, 6) and motion subspace (6,) at position ``q``.

    ``jtyp``: a code 'Rx', 'Ry', 'Rz' ('R'), 'Px', 'Py', 'Pz' ('P'), or
    ``{'code': 'H', 'pars': {'pitch': h}}`` (helical about z); ``q`` [rad or m].
    """
    code, pitch = _joint('jtyp', jtyp)
    q = chk.scalar('q', q)
    S = np.zeros(6)
    axis = _AXES[code[1]] if code != 'H' else 2
    if code[0] == 'R':
        S[axis] = 1.0
        return (Xrotx, Xroty, Xrotz)[axis](q), S
    if code == 'H':
        S[2], S[5] = 1.0, pitch
        return Xrotz(q) @ Xtrans([0.0, 0.0, q * pitch]), S
    S[3 + axis] = 1.0
    r = np.zeros(3)
    r[axis] = q
    return Xtrans(r), S


# --- the model -------------------------------------------------------------------------------


class Model:
    """
    A spatial_v2 system model: ``NB``, ``parent``, ``jtype``, ``Xtree``, ``I``, ``gravity``.

    ``Model(fields)`` takes a dict (or any mapping) of those fields, ``Model(NB=..., ...)``
    keywords, and fields may also be set one by one afterwards (``model.NB = 2`` ...), as a
    MATLAB script fills its struct.  ``names``: optional body names (a model from a URDF has
    them), ``joint_names`` likewise.  Each field is checked when it is set (InputError naming
    it and the body) and the whole model when a dynamics function first uses it.

    Fields are stored read-only (tuples of read-only arrays): set a whole field again to
    change it (``model.Xtree = [...]``), so that the compiled model built from them is never
    stale.  Other fields of a MATLAB model (appearance, camera, gc) are kept and unused;
    ``gamma_q`` (constraints) is refused.
    """

    FIELDS = ('NB', 'parent', 'jtype', 'Xtree', 'I', 'gravity')

    def __init__(self, fields=None, **kwargs):
        object.__setattr__(self, '_built', None)
        for key in self.FIELDS:
            object.__setattr__(self, key, GRAVITY_ARRAY if key == 'gravity' else None)
        object.__setattr__(self, 'names', None)
        object.__setattr__(self, 'joint_names', None)
        if fields is not None:
            if not isinstance(fields, Mapping):
                raise InputError(
                    f'fields: expected a dict of model fields (NB, parent, jtype, Xtree, I, '
                    f'gravity), got {chk.given(fields)}'
                )
            kwargs = {**dict(fields), **kwargs}
        for key, value in kwargs.items():
            setattr(self, key, value)

    def __setattr__(self, key, value):
        if key == 'gamma_q':
            raise ModelError(
                'gamma_q: kinematic constraints on the joint variables are not supported here '
                '(spart_ros.core.mimic models joints that follow others)'
            )
        if key in self.FIELDS:
            value = _FIELD_CHECKS[key](value)
        elif key in ('names', 'joint_names') and value is not None:
            value = tuple(str(v) for v in value)
        object.__setattr__(self, key, value)
        object.__setattr__(self, '_built', None)

    def __repr__(self):
        return f'<spatial_v2 Model NB={self.NB}>'

    def check(self):
        """Check the whole model (ModelError naming the field and body); return this model."""
        self._fast()
        return self

    def _fast(self):
        """Return the compiled model (built on first use after a field changed)."""
        built = self._built
        if built is None:
            built = _Compiled(self)
            object.__setattr__(self, '_built', built)
        return built


GRAVITY_ARRAY = np.array(GRAVITY)
GRAVITY_ARRAY.setflags(write=False)


def _readonly(a):
    a = np.array(a, dtype=float)
    a.setflags(write=False)
    return a


def _check_NB(value):
    if (
        isinstance(value, (bool, np.bool_))
        or not isinstance(value, (int, np.integer, float, np.floating))
        or value != int(value)
        or value < 1
    ):
        raise InputError(
            f'NB: expected the number of bodies (an integer >= 1), got {chk.given(value)}'
        )
    return int(value)


def _check_parent(value):
    parent = _integers('parent', value)
    for i, p in enumerate(parent, start=1):
        if not 0 <= p < i:
            raise ModelError(
                f'parent: body {i} has parent {p}; parents must be numbered below their children '
                '(0 <= parent(i) < i, 0 = the base)'
            )
    return parent


def _integers(name, value):
    if isinstance(value, (int, np.integer)):
        value = [value]
    a = np.asarray(value)
    if a.ndim == 2 and 1 in a.shape:
        a = a.ravel()
    if a.ndim != 1 or a.dtype.kind not in 'iuf' or a.dtype == bool:
        raise InputError(f'{name}: expected a list of body numbers, got {chk.given(value)}')
    if a.dtype.kind == 'f' and (not np.all(np.isfinite(a)) or np.any(a != np.round(a))):
        raise InputError(f'{name}: expected integers (body numbers), got {a.tolist()}')
    return tuple(int(v) for v in a)


def _entries(name, value):
    """Return ``value`` as a list (one entry when it is a string, mapping or (6, 6) array)."""
    if isinstance(value, (str, Mapping)) or (
        isinstance(value, np.ndarray) and value.shape == (6, 6)
    ):
        return [value]
    if isinstance(value, np.ndarray) and value.ndim == 2:
        raise InputError(f'{name}: expected a list of NB entries, got an array {value.shape}')
    try:
        return list(value)
    except TypeError:
        raise InputError(
            f'{name}: expected a list of NB entries, got {chk.given(value)}'
        ) from None


def _check_jtype(value):
    value = _entries('jtype', value)
    out = []
    for i, j in enumerate(value):
        code, pitch = _joint(f'jtype[{i}] (body {i + 1})', j)
        if not isinstance(j, str):  # a structure: stored as a read-only one
            pars = MappingProxyType({'pitch': pitch} if code == 'H' else {})
            j = MappingProxyType({'code': code, 'pars': pars})
        out.append(j)
    return tuple(out)


def _check_matrices(name, check):
    def checked(value):
        out = []
        for i, X in enumerate(_entries(name, value)):
            what = f'{name}[{i}] (body {i + 1})'
            X = chk.array(what, X, (6, 6))
            check(what, X)
            out.append(_readonly(X))
        return tuple(out)

    return checked


def _check_gravity(value):
    g = np.asarray(value)
    if g.shape == (6,) or g.shape == (6, 1):  # a spatial acceleration [0; g]
        g = chk.vector('gravity', g, 6)
        if np.any(g[:3]):
            raise InputError('gravity: a spatial gravity must be [0; 0; 0; g]')
        g = g[3:]
    return _readonly(chk.vector('gravity', g, 3))


_FIELD_CHECKS = {
    'NB': _check_NB,
    'parent': _check_parent,
    'jtype': _check_jtype,
    'Xtree': _check_matrices('Xtree', _decompose_transform),
    'I': _check_matrices('I', _decompose_inertia),
    'gravity': _check_gravity,
}


class _Compiled:
    """A model built into a Robot and its fast path, with the maps between their numberings."""

    def __init__(self, model):
        NB = model.NB
        if NB is None:
            raise ModelError('NB: the model has no number of bodies (set model.NB)')
        for key in ('parent', 'jtype', 'Xtree', 'I'):
            value = getattr(model, key)
            if value is None:
                raise ModelError(f'{key}: the model has no {key} (a list of NB = {NB} entries)')
            if len(value) != NB:
                raise ModelError(f'{key}: {len(value)} entries for NB = {NB} bodies')
        b = RobotBuilder('spatial_v2_model')
        b.add_link('base', 0.0, np.zeros((3, 3)))
        for i in range(1, NB + 1):
            code, pitch = _joint(f'jtype[{i - 1}] (body {i})', model.jtype[i - 1])
            E, r = _decompose_transform(f'Xtree[{i - 1}] (body {i})', model.Xtree[i - 1])
            m, c, Ibar = _decompose_inertia(f'I[{i - 1}] (body {i})', model.I[i - 1])
            p = model.parent[i - 1]
            parent = 'base' if p == 0 else f'body{p}'
            origin = homogeneous(E.T, r)  # the predecessor frame in body parent(i)'s frame
            axis = np.zeros(3)
            axis[_AXES[code[1]] if code != 'H' else 2] = 1.0
            body, joint = f'body{i}', f'joint{i}'
            kind = 'revolute' if code[0] in 'RH' else 'prismatic'
            if code == 'H' and pitch != 0.0:  # the turn, then the translation that follows it
                b.add_link(f'{body}_turn', 0.0, np.zeros((3, 3)))
                b.add_joint(joint, kind, parent, f'{body}_turn', origin=origin, axis=axis)
                b.add_link(body, m, Ibar, com=homogeneous(p=c))
                b.add_joint(
                    f'{joint}_pitch',
                    'prismatic',
                    f'{body}_turn',
                    body,
                    axis=axis,
                    mimic=(joint, pitch, 0.0),
                )
            else:
                b.add_link(body, m, Ibar, com=homogeneous(p=c))
                b.add_joint(joint, kind, parent, body, origin=origin, axis=axis)
        with warnings.catch_warnings():  # a helical joint's mimic joint is this module's own
            warnings.simplefilter('ignore', MimicJointWarning)
            robot = b.build()
        self.robot = robot
        self.fd = fast_dynamics(robot, model.gravity)
        self.NB = NB
        names = robot.coordinates.names
        #: the spatial_v2 body index (0-based) of each of the core's coordinates
        self.order = np.array([int(name[5:]) - 1 for name in names], dtype=np.int64)
        self.in_order = bool(np.array_equal(self.order, np.arange(NB)))  # no permutation
        #: each body's link id in the Robot (0-based column of the core's per-link arrays)
        self.column = np.array([robot.link_index(f'body{i}') - 1 for i in range(1, NB + 1)])
        self.R0, self.r0, self.z6 = np.eye(3), np.zeros(3), np.zeros(6)
        self.zg = np.zeros(3)

    def coordinates(self, name, x):
        """Return a vector (NB,) of spatial_v2's order, checked, in the core's order."""
        x = chk.vector(name, x, self.NB)
        return x if self.in_order else x[self.order]

    def spatial(self, x):
        """Return the core's coordinates ``x`` as a new (NB,) array in spatial_v2 order."""
        if self.in_order:
            return x.copy()
        out = np.empty(self.NB)
        out[self.order] = x
        return out

    def loads(self, f_ext, qc, qdc):
        """Return the core's link wrenches (6, n) at the CoMs of ``f_ext``, or None."""
        if f_ext is None or (isinstance(f_ext, (list, tuple)) and len(f_ext) == 0):
            return None
        if isinstance(f_ext, np.ndarray) and f_ext.size == 0:
            return None
        if len(f_ext) != self.NB:
            raise InputError(
                f'f_ext: expected an empty list or NB = {self.NB} entries (a spatial force (6,) '
                f'or an empty entry per body), got {len(f_ext)}'
            )
        F = np.zeros((6, self.NB))
        for i, f in enumerate(f_ext):
            if f is not None and np.size(f) != 0:
                F[:, i] = chk.vector(f'f_ext[{i}] (body {i + 1})', f, 6)
        if not F.any():
            return None
        rL = self.fd.twists(self.R0, self.r0, qc, self.z6, qdc, floating=False)[0]
        r = rL[:, 1 + self.column]  # the bodies' CoMs, base coordinates
        wFm = np.zeros((6, self.robot.n_links_joints))
        wFm[:3, self.column] = F[:3] - np.cross(r.T, F[3:].T).T  # moment about the CoM
        wFm[3:, self.column] = F[3:]
        return wFm


def _fast(model):
    if isinstance(model, Mapping):
        model = Model(model)
    elif not isinstance(model, Model):
        raise InputError(
            f'model: expected a spatial_v2 Model (or a dict of NB, parent, jtype, Xtree, I), got '
            f'{chk.given(model)}'
        )
    return model._fast()


# --- dynamics --------------------------------------------------------------------------------


def ID(model, q, qd, qdd, f_ext=None):
    """
    Return the joint forces tau (NB,) that give accelerations ``qdd`` (RNEA).

    ``model``: a :class:`Model` (or a dict of its fields); ``q``, ``qd``, ``qdd`` (NB,) joint
    positions, velocities, accelerations; ``f_ext``: external spatial forces (module docstring).
    """
    c = _fast(model)
    qc, qdc, qddc = c.coordinates('q', q), c.coordinates('qd', qd), c.coordinates('qdd', qdd)
    wFm = c.loads(f_ext, qc, qdc)
    taum = c.fd.inverse_dynamics(c.R0, c.r0, qc, c.z6, qdc, c.z6, qddc, wFm=wFm, floating=False)[1]
    return c.spatial(taum)


def HandC(model, q, qd, f_ext=None):
    """
    Return ``(H, C)``: the joint-space inertia (NB, NB) and the bias forces (NB,).

    tau = H qdd + C; C holds gravity, the velocity products and ``f_ext``.  ``model``, ``q``,
    ``qd``, ``f_ext`` as for :func:`ID`.
    """
    return _handc(_fast(model), q, qd, f_ext)


def _handc(c, q, qd, f_ext):
    qc, qdc = c.coordinates('q', q), c.coordinates('qd', qd)
    wFm = c.loads(f_ext, qc, qdc)
    Cm = c.fd.bias_forces(c.R0, c.r0, qc, c.z6, qdc, wFm=wFm, floating=False)[1]
    Hm = c.fd.mass_matrix(c.R0, c.r0, qc)[6:, 6:]
    if c.in_order:
        return Hm.copy(), Cm.copy()
    H = np.empty((c.NB, c.NB))
    H[np.ix_(c.order, c.order)] = Hm
    return H, c.spatial(Cm)


def FDab(model, q, qd, tau, f_ext=None):
    """
    Return the joint accelerations qdd (NB,) under joint forces ``tau`` (articulated body).

    ``model``, ``q``, ``qd``, ``f_ext`` as for :func:`ID`.  SingularModelError names what has no
    mass when H is singular.
    """
    c = _fast(model)
    qc, qdc, tauc = c.coordinates('q', q), c.coordinates('qd', qd), c.coordinates('tau', tau)
    wFm = c.loads(f_ext, qc, qdc)
    qdd = c.fd.forward_dynamics(c.R0, c.r0, qc, c.z6, qdc, c.z6, tauc, wFm=wFm, floating=False)[1]
    return c.spatial(qdd)


def FDcrb(model, q, qd, tau, f_ext=None):
    """
    Return the joint accelerations qdd (NB,): H qdd = tau - C solved by Cholesky (CRB).

    ``model``, ``q``, ``qd``, ``tau``, ``f_ext`` as for :func:`FDab` (a singular H: the same
    SingularModelError).
    """
    c = _fast(model)
    tau = chk.vector('tau', tau, c.NB)
    H, C = _handc(c, q, qd, f_ext)
    try:
        L = np.linalg.cholesky(H)
    except np.linalg.LinAlgError:
        c.fd.forward_dynamics(  # raises SingularModelError naming what has no mass
            c.R0,
            c.r0,
            c.coordinates('q', q),
            c.z6,
            np.zeros(c.NB),
            c.z6,
            np.zeros(c.NB),
            floating=False,
        )
        raise ModelError(
            'H is not positive definite at this q (an inertia no body has?)'
        ) from None
    return np.linalg.solve(L.T, np.linalg.solve(L, tau - C))


def HCcalc(model, q, qd, f_ext=None):
    """
    Return ``(H, C)`` as the course computes them, from inverse dynamics alone.

    C = ID(q, qd, 0) (with gravity and ``f_ext``), and column j of H = ID(q, 0, e_j) without
    gravity: NB + 1 calls of the recursive Newton-Euler algorithm.  Equals :func:`HandC` (which
    is cheaper); ``model``, ``q``, ``qd``, ``f_ext`` as there.
    """
    c = _fast(model)
    qc, qdc = c.coordinates('q', q), c.coordinates('qd', qd)
    wFm = c.loads(f_ext, qc, qdc)
    zq = np.zeros(c.NB)
    C = c.spatial(
        c.fd.inverse_dynamics(c.R0, c.r0, qc, c.z6, qdc, c.z6, zq, wFm=wFm, floating=False)[1]
    )
    H = np.empty((c.NB, c.NB))
    e = np.zeros(c.NB)
    for j in range(c.NB):  # column k of the core's H is body order[k]'s
        e[j] = 1.0
        H[:, c.order[j]] = c.spatial(
            c.fd.inverse_dynamics(c.R0, c.r0, qc, c.z6, zq, c.z6, e, gravity=c.zg, floating=False)[
                1
            ]
        )
        e[j] = 0.0
    return H, C


# --- the course's tree sets ------------------------------------------------------------------


def _parents(lam):
    lam = _check_parent(lam)
    if not lam:
        raise InputError('lam: expected a parent array of at least one body')
    return lam


def kappa(lam):
    """
    Return the joints supporting each body (its path to the base): entry i - 1 for body i.

    ``lam``: the parent array (model.parent): lam[i - 1] = parent of body i, 0 = the base.
    """
    lam = _parents(lam)
    out = []
    for i, p in enumerate(lam, start=1):
        out.append((out[p - 1] if p else []) + [i])
    return out


def mu(lam):
    """
    Return the children of each body: entry k for body k = 0 (the base) ... NB.

    ``lam``: the parent array (as for :func:`kappa`).
    """
    lam = _parents(lam)
    out = [[] for _ in range(len(lam) + 1)]
    for i, p in enumerate(lam, start=1):
        out[p].append(i)
    return out


def nu(lam):
    """
    Return the bodies each joint supports (its subtree): entry i - 1 for joint i.

    ``lam``: the parent array (as for :func:`kappa`).
    """
    lam = _parents(lam)
    out = [{i} for i in range(1, len(lam) + 1)]
    for i in range(len(lam), 0, -1):  # children are numbered after their parents
        if lam[i - 1]:
            out[lam[i - 1] - 1] |= out[i - 1]
    return [sorted(s) for s in out]


def depth(lam):
    """
    Return each body's depth: entry i - 1 = the number of joints between body i and the base.

    ``lam``: the parent array (as for :func:`kappa`); the tree's depth is ``max(depth(lam))``.
    """
    return [len(k) for k in kappa(lam)]


# --- a model from a URDF ---------------------------------------------------------------------


def _alignment(kind, axis):
    """(code, A (3, 3)): the joint code and the rotation taking the code's axis to ``axis``."""
    letter = 'R' if kind == REVOLUTE else 'P'
    for k, name in enumerate('xyz'):
        if abs(axis[k] - 1.0) <= 1e-12:
            return letter + name, np.eye(3)
    z = np.array([0.0, 0.0, 1.0])
    w = np.cross(z, axis)
    s, c = np.linalg.norm(w), float(axis @ z)
    if s < 1e-12:  # axis = -z: half a turn about x
        return letter + 'z', np.diag([1.0, -1.0, -1.0])
    W = _skew(w / s)
    return letter + 'z', np.eye(3) + s * W + (1.0 - c) * W @ W


def model_from_robot(robot, gravity=None):
    """
    Return the spatial_v2 :class:`Model` of a core ``robot`` with its base fixed.

    Body i is the i-th moving joint's child in the robot's joint order (``robot.q_names``):
    links on fixed joints are merged into the body they are welded to, each joint frame is
    turned so that its axis is the code's ('Rx'... when the axis is +x, +y or +z, else 'Rz' /
    'Pz' in a frame whose z is the axis).  Mimic joints are independent joints here (as in
    SPART's functions).  ``gravity`` (3,) in the base link frame (None: spatial_v2's default),
    or in the URDF's ``world`` frame when a fixed joint mounts the base on it
    (``robot.base_pose``): the model's gravity is then turned into the base's coordinates.
    """
    n = robot.n_links_joints
    pose = [np.eye(4)] + [None] * n  # each link's URDF frame in its body's coordinates
    body = [0] * (n + 1)
    frames = [robot.base_link.T] + [link.T for link in robot.links]  # CoM in the URDF frame
    parent, jtype, Xtree, names, joint_names = [], [], [], [], []
    inertia = {0: np.zeros((6, 6))}
    for j in robot.joints:
        k, p = j.child_link, j.parent_link
        origin = pose[p] @ frames[p] @ j.T  # the joint frame in the parent body's coordinates
        if j.type in (REVOLUTE, PRISMATIC):
            code, A = _alignment(j.type, j.axis)
            P = origin @ homogeneous(A, None)
            parent.append(body[p])
            jtype.append(code)
            Xtree.append(plux(P[:3, :3].T, P[:3, 3]))
            names.append(robot.links[k - 1].name)
            joint_names.append(j.name)
            body[k] = len(parent)
            inertia[body[k]] = np.zeros((6, 6))
            pose[k] = homogeneous(A.T, None)  # the URDF link frame in the body frame
        else:
            body[k] = body[p]
            pose[k] = origin
        link = robot.links[k - 1]
        C = pose[k] @ link.T  # the link's CoM frame in its body's coordinates
        R = C[:3, :3]
        inertia[body[k]] += mcI(float(link.mass), C[:3, 3], R @ link.inertia @ R.T)
    if not parent:
        raise ModelError(f'robot {robot.name!r} has no moving joint: a spatial_v2 model needs one')
    inertias = [inertia[i] for i in range(1, len(parent) + 1)]
    g = np.array(GRAVITY if gravity is None else chk.vector('gravity', gravity, 3))
    if robot.base_pose is not None:  # given in the world frame the base is mounted in
        g = robot.base_pose[:3, :3].T @ g
    return Model(
        NB=len(parent),
        parent=parent,
        jtype=jtype,
        Xtree=Xtree,
        I=inertias,
        gravity=g,
        names=names,
        joint_names=joint_names,
    )


def model_from_urdf(source, gravity=None, **options):
    """
    Return the spatial_v2 :class:`Model` of a URDF robot, its root link the fixed base.

    ``source``: a URDF path or text (:func:`spart_ros.core.urdf.robot_from_urdf`, which takes
    ``options``); ``gravity`` (3,) in the root link's frame, or in the ``world`` frame of a
    ``world`` root fixed to it (None: [0, 0, -9.81]).  Body names
    are ``model.names`` (URDF link names), joint names ``model.joint_names``; see
    :func:`model_from_robot`.
    """
    robot, _ = robot_from_urdf(source, **options)
    return model_from_robot(robot, gravity)
