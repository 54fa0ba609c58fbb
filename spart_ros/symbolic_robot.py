"""
symbolic_robot's three functions and its struct, on spart_ros.symbolic and spart_ros.codegen.

For porting MATLAB scripts of symbolic_robot (github.com/ferrarodav/symbolic_robot, Siciliano
et al.'s *Robotics: Modelling, Planning and Control* conventions) line by line::

    from spart_ros.symbolic_robot import (
        add_manipulator_dynamics, export_functions, get_manipulator)

    robot = get_manipulator(DHParams, 'rrp', np.eye(4))
    robot = add_manipulator_dynamics(robot, coms, masses, Is, g0)
    export_functions(robot, 'my_robot', True)        # my_robot.py, my_robot.c, my_robot.h

**The robot.**  ``DHParams`` (n, 4): one row per link, read as symbolic_robot's code reads it,
``[r alpha d theta]`` (its README lists the four parameters as d, theta, r, alpha; its code builds
relT_i = [Rz(theta) [0 0 d]'] [Rx(alpha) [r 0 0]'] from columns 4, 3 and 2, 1, and its planar
example puts the link lengths in column 1); numbers or sympy expressions.  ``jointTypes``: one
letter per link, ``'r'`` (the joint adds q_i to theta) or ``'p'`` (to d).  ``base``: frame {0}'s
4x4 pose.  Frame {i} sits at the end of link i; joint i moves about z_{i-1}.  The chain is built
as a core model (``core.RobotBuilder``, the DH rows by ``core.dh.dh_transform``) and the
expressions come from ``spart_ros.symbolic.SymbolicModel`` on it (the core's algorithms on
symbols, numbers kept exact: 0.12 is 3/25).

**The struct** is a :class:`Manipulator`: an object whose attributes are the MATLAB struct's
fields, sympy expressions in ``q`` (q1..qn) and ``q_dot`` (q_dot1..q_dotn), MATLAB's cells as
Python lists (``robot.T[0]`` is MATLAB's ``robot.T{1}``), its 3-D arrays as sympy Arrays
(``robot.C[i, j, k]``, 0-based).  From :func:`get_manipulator`: ``fixedDHParams``, ``jointTypes``,
``base``, ``q``, ``q_dot``, ``dh`` (the DH table with q added), ``relT`` (link i's frame in link
i-1's), ``T`` (link i's frame in the world), ``z``, ``p`` (its z axis and origin), ``euler``
(its ZYZ Euler angles as symbolic_robot computes them: [0, 0, atan2(T21, T11)] when T13 is
identically 0, else [atan2(T23, T13), atan2(sqrt(T13^2 + T23^2), T33), atan2(T32, -T31)]),
``point`` (p1, p2, p3) and ``jacobian`` (the geometric Jacobian of that point, every joint's
column), ``J`` (the end-effector's geometric Jacobian, **linear rows first**: [p_dot; omega] = J
q_dot, as the book writes it; spart_ros's own Jacobians are [omega; v]), ``Ja`` (d[p; euler]/dq).
:func:`add_manipulator_dynamics` adds ``coms``, ``masses``, ``Is``, ``g0``, ``Jp`` (each link's CoM
Jacobian, linear rows first), ``B`` (the inertia matrix), ``C`` (the Christoffel symbols of the
first kind, c_ijk = (dB_ij/dq_k + dB_ik/dq_j - dB_jk/dq_i) / 2, so that sum_jk c_ijk q_dot_j
q_dot_k is the Coriolis and centrifugal torque), ``g`` (the gravity torque, with the sign of
B q_ddot + c + g = tau) and ``Ja_dot`` (dJa/dt in q, q_dot).  ``robot.model`` is the core
:class:`~spart_ros.core.model.Robot` behind it (an addition: numeric with spart_ros.core).

``simplify=True`` (the default, as symbolic_robot simplifies) runs spart_ros.symbolic's bounded
simplification on each result (about a second for a planar two-link arm, a minute or more for a
spatial three-joint one); ``simplify=False`` keeps them as the algorithms build them, equal in
value, in a fraction of that.  :func:`export_functions` writes the struct's functions of
q as Python and C through ``spart_ros.codegen.generate_from_sympy``.
"""

import copy
import os

import numpy as np

from .codegen.expressions import CodegenError
from .core import checks as chk
from .core.dh import dh_transform
from .core.errors import InputError
from .core.model import homogeneous, RobotBuilder

__all__ = ['Manipulator', 'get_manipulator', 'add_manipulator_dynamics', 'export_functions']


class Manipulator:
    """
    symbolic_robot's struct: an object whose attributes are its fields (module docstring).

    ``fields``: the initial fields as keyword arguments.  ``robot.fields()`` lists them in the
    order they were added, ``robot.has('B')`` says whether a field is there (MATLAB's
    ``isfield``).
    """

    def __init__(self, **fields):
        self.__dict__.update(fields)

    def fields(self):
        """Return the names of the fields, in the order they were added (MATLAB's fieldnames)."""
        return [k for k in self.__dict__ if not k.startswith('_')]

    def has(self, name):
        """Return True if the struct has the field ``name`` (MATLAB's isfield)."""
        return name in self.fields()

    def __repr__(self):
        n = len(self.__dict__.get('jointTypes', ''))
        return f'<symbolic_robot manipulator, {n} links: {", ".join(self.fields())}>'


def _sympy():
    import sympy

    return sympy


def _exact(x):
    from .symbolic.exact import exact_number

    return exact_number(x) if not hasattr(x, 'free_symbols') else x


def _table(name, x, rows, cols):
    """``x`` as a list of rows of exact sympy numbers or expressions (InputError naming it)."""
    sp = _sympy()
    try:
        a = np.array(sp.Matrix(x).tolist() if isinstance(x, sp.MatrixBase) else x, dtype=object)
    except (TypeError, ValueError):
        a = None
    if a is None or a.ndim != 2 or (rows is not None and a.shape[0] != rows) or a.shape[1] != cols:
        want = f'({rows if rows is not None else "n"}, {cols})'
        got = getattr(a, 'shape', None)
        raise InputError(
            f'{name}: expected a {want} array, got {chk.given(x) if got is None else got}'
        )
    out = []
    for r, row in enumerate(a):
        entries = []
        for c, v in enumerate(row):
            try:
                e = v if isinstance(v, sp.Basic) else _exact(float(v))
            except (sp.SympifyError, TypeError, ValueError):
                e = None
            if not isinstance(e, sp.Expr) or (e.is_number and not (e.is_real and e.is_finite)):
                raise InputError(
                    f'{name}[{r}, {c}]: expected a real number or a sympy expression, got {v!r}'
                )
            entries.append(e)
        out.append(entries)
    return out


def _vector(name, x, n):
    return [row[0] for row in _table(name, np.reshape(np.array(x, dtype=object), (-1, 1)), n, 1)]


def _list(name, x, n):
    try:
        items = list(x)
    except TypeError:
        items = None
    if items is None or len(items) != n:
        raise InputError(f'{name}: expected {n} entries (one per link), got {chk.given(x)}')
    return items


def _float_or_sym(e):
    return e if e.free_symbols else float(e)


def _chain(robot, coms=None, masses=None, Is=None, numbers=False):
    """
    Return the core Robot of the struct's chain, massless or with the masses.

    Built with ``core.RobotBuilder`` in URDF terms: link i's frame is frame {i-1} moved by joint i
    (about or along its z), the constant rest of the DH row, relT_i at q = 0
    (``core.dh.dh_transform``), is where joint i + 1 sits and, times the CoM's offset, link i's
    CoM frame (frame {i}'s axes).  Exact sympy numbers (the expressions stay rational), or floats
    with ``numbers`` (None if a parameter is a symbol).
    """
    sp = _sympy()
    n = len(robot.jointTypes)

    def value(x):
        a = np.array(x, dtype=object)
        if not numbers:
            return a
        return np.array(a, dtype=float)

    try:
        b = RobotBuilder('symbolic_robot')
        b.add_link('base', 0, value(sp.zeros(3, 3).tolist()))
        parent, origin = 'base', robot._base
        for i in range(n):
            r, alpha, d, theta = robot._rows[i]
            rest = dh_transform(d, alpha, r, theta)
            com = rest if coms is None else rest @ homogeneous(p=np.array(coms[i], dtype=object))
            b.add_link(
                f'L{i + 1}',
                0 if masses is None else (float(masses[i]) if numbers else masses[i]),
                value(sp.zeros(3, 3).tolist() if Is is None else Is[i]),
                com=value(com),
            )
            kind = 'revolute' if robot.jointTypes[i] == 'r' else 'prismatic'
            b.add_joint(
                f'J{i + 1}', kind, parent, f'L{i + 1}', origin=value(origin), axis=[0, 0, 1]
            )
            parent, origin = f'L{i + 1}', rest
        return b.build()
    except TypeError:  # a symbol where a number is needed
        if numbers:
            return None
        raise


def _models(robot, coms=None, masses=None, Is=None):
    """Return (the core Robot: floats, or exact if symbolic; its exact twin for the symbols)."""
    exact = _chain(robot, coms, masses, Is)
    return _chain(robot, coms, masses, Is, numbers=True) or exact, exact


def _symbolic_model(model, gravity, simplify):
    from .symbolic import SymbolicModel

    return SymbolicModel(model, gravity=gravity, simplify=simplify)


def _simplified(expr, simplify):
    from .symbolic.simplify import simplify as simplify_expressions

    return simplify_expressions(expr, simplify)[0]


def _linear_first(J):
    """Return the rows [linear; angular] of spart_ros's [angular; linear] Jacobian (a Matrix)."""
    return J[3:6, :].col_join(J[0:3, :])


def _euler(T):
    """symbolic_robot's ZYZ Euler angles of the frame T (module docstring), a 3x1 Matrix."""
    sp = _sympy()
    if T[0, 2] == 0:
        return sp.Matrix([0, 0, sp.atan2(T[1, 0], T[0, 0])])
    return sp.Matrix(
        [
            sp.atan2(T[1, 2], T[0, 2]),
            sp.atan2(sp.sqrt(T[0, 2] ** 2 + T[1, 2] ** 2), T[2, 2]),
            sp.atan2(T[2, 1], -T[2, 0]),
        ]
    )


def get_manipulator(DHParams, jointTypes, base, *, simplify=True):
    """
    Return the :class:`Manipulator` with the kinematics of a serial chain (module docstring).

    ``DHParams`` (n, 4): rows [r alpha d theta] (numbers or sympy expressions); ``jointTypes``: a
    string of n letters 'r' (revolute) or 'p' (prismatic); ``base`` (4, 4): frame {0} in the world;
    ``simplify``: simplify the results (symbolic_robot does; False skips it).
    """
    sp = _sympy()
    if not isinstance(jointTypes, str) or not jointTypes or set(jointTypes) - {'r', 'p'}:
        raise InputError(
            f"jointTypes: expected a string of 'r' (revolute) and 'p' (prismatic), one per link, "
            f'got {chk.given(jointTypes)}'
        )
    n = len(jointTypes)
    rows = _table('DHParams', DHParams, n, 4)
    base_rows = _table('base', base, 4, 4)
    if [_float_or_sym(e) for e in base_rows[3]] != [0.0, 0.0, 0.0, 1.0]:
        raise InputError(
            f'base: expected a homogeneous transform (bottom row [0 0 0 1]), got {base_rows[3]}'
        )
    rotation = np.array([row[:3] for row in base_rows[:3]], dtype=object)
    if not chk.has_symbols(rotation):
        chk.rotation('base (its rotation block)', rotation.astype(float))
    simplify = chk.flag('simplify', simplify)
    robot = Manipulator(
        fixedDHParams=sp.Matrix(rows), jointTypes=jointTypes, base=sp.Matrix(base_rows)
    )
    robot._rows, robot._base = rows, base_rows
    robot.model, exact = _models(robot)
    model = _symbolic_model(exact, None, simplify)
    q = model.q
    robot.q = q
    robot.q_dot = sp.Matrix(sp.symbols(f'q_dot1:{n + 1}', real=True))
    robot.dh = sp.Matrix(
        [
            [
                r,
                alpha,
                d + (q[i] if jointTypes[i] == 'p' else 0),
                theta + (q[i] if jointTypes[i] == 'r' else 0),
            ]
            for i, (r, alpha, d, theta) in enumerate(rows)
        ]
    )
    robot.relT = [
        sp.Matrix(dh_transform(d, alpha, r, theta)) for r, alpha, d, theta in robot.dh.tolist()
    ]
    robot.T = []
    for i in range(n):
        R, p = model.pose(i + 1)
        robot.T.append(R.row_join(p).col_join(sp.Matrix([[0, 0, 0, 1]])))
    robot.z = [T[0:3, 2] for T in robot.T]
    robot.p = [T[0:3, 3] for T in robot.T]
    robot.euler = [_euler(T) for T in robot.T]
    robot.point = sp.Matrix(sp.symbols('p1:4', real=True))
    base_matrix = robot.base
    columns = []
    for i in range(n):
        z, o = (
            (base_matrix[0:3, 2], base_matrix[0:3, 3])
            if i == 0
            else (robot.z[i - 1], robot.p[i - 1])
        )
        if jointTypes[i] == 'p':
            columns.append(z.col_join(sp.zeros(3, 1)))
        else:
            columns.append(z.cross(robot.point - o).col_join(z))
    robot.jacobian = sp.Matrix.hstack(*columns)
    robot.J = _linear_first(model.jacobian(n))
    pose = robot.p[-1].col_join(robot.euler[-1])
    robot.Ja = _simplified(pose.jacobian(q), simplify)
    robot._simplify = simplify
    return robot


def add_manipulator_dynamics(robot, coms, masses, Is, g0, *, simplify=None):
    """
    Return a copy of the :class:`Manipulator` ``robot`` with the dynamics fields added.

    ``coms``: n CoMs (3,), each in its link's frame {i} (at the link's end, so usually negative
    x); ``masses`` (n,); ``Is``: n inertia tensors (3, 3) about the CoM, axes of frame {i};
    ``g0`` (3,): gravity in the world frame.  Numbers or sympy expressions.  ``simplify``: as
    :func:`get_manipulator` (None: as the robot was built).
    """
    sp = _sympy()
    if not isinstance(robot, Manipulator) or not robot.has('T'):
        raise InputError(f'robot: expected the struct of get_manipulator, got {chk.given(robot)}')
    n = len(robot.jointTypes)
    simplify = robot._simplify if simplify is None else chk.flag('simplify', simplify)
    coms_rows = [_vector(f'coms[{i}]', c, 3) for i, c in enumerate(_list('coms', coms, n))]
    mass_list = _vector('masses', masses, n)
    inertias = [_table(f'Is[{i}]', I, 3, 3) for i, I in enumerate(_list('Is', Is, n))]
    gravity = _vector('g0', g0, 3)
    out = copy.copy(robot)
    out.coms = [sp.Matrix(c) for c in coms_rows]
    out.masses = sp.Matrix(mass_list)
    out.Is = [sp.Matrix(inertia) for inertia in inertias]
    out.g0 = sp.Matrix(gravity)
    out.model, exact = _models(robot, coms_rows, mass_list, inertias)
    model = _symbolic_model(exact, gravity, simplify)
    out.Jp = [_linear_first(model.jacobian(i + 1)) for i in range(n)]
    out.B = model.mass_matrix()
    out.C = model.christoffel()
    out.g = model.gravity_forces()
    Ja_dot = sp.zeros(6, n)  # (not simplified, as symbolic_robot leaves it)
    for k in range(n):
        Ja_dot += out.Ja.diff(robot.q[k]) * robot.q_dot[k]
    out.Ja_dot = Ja_dot
    return out


def export_functions(robot, prefix, optimize=True, *, language='all', out_dir='.', jit=True):
    """
    Write the struct's functions of q as code; return the paths of the files written.

    As symbolic_robot's: ``<prefix>_T1`` ... ``_Tn`` (each link's frame, 4x4), ``_EEpose`` ([p;
    euler] of the end effector, 6), ``_Jg`` (J, 6 x n) and, with the dynamics, ``_B``, ``_C`` (n x
    n x n) and ``_G`` (g): functions ``T1(q)``... of the Python module ``<prefix>.py`` and
    ``<prefix>_T1(q, out)``... of ``<prefix>.c`` / ``<prefix>.h`` in ``out_dir``, through
    ``spart_ros.codegen.generate_from_sympy`` (``language``: 'python', 'c' or 'all'; ``jit``: the
    Python module compiles with numba when installed).  ``optimize``: MATLAB's switch; the code
    generator always computes shared subexpressions once (what MATLAB's optimization does), so
    both values give the same code.  Every parameter but q must be a number (CodegenError naming a
    symbol that is not).
    """
    from .codegen import generate_from_sympy

    if not isinstance(robot, Manipulator) or not robot.has('T'):
        raise InputError(f'robot: expected the struct of get_manipulator, got {chk.given(robot)}')
    if not isinstance(prefix, str) or not prefix:
        raise InputError(f'prefix: expected a non-empty string, got {chk.given(prefix)}')
    chk.flag('optimize', optimize)
    n = len(robot.jointTypes)
    functions = [
        (f'T{i + 1}', T, f'T{i + 1} (4, 4): the frame of link {i + 1} in the world frame')
        for i, T in enumerate(robot.T)
    ]
    functions += [
        (
            'EEpose',
            robot.p[-1].col_join(robot.euler[-1]),
            'x (6,): [p; ZYZ Euler angles] of the end effector',
        ),
        ('Jg', robot.J, f'Jg (6, {n}): the geometric Jacobian, rows [linear; angular velocity]'),
    ]
    if robot.has('B'):
        functions += [
            ('B', robot.B, f'B ({n}, {n}): the inertia matrix'),
            ('C', robot.C, f'C ({n}, {n}, {n}): the Christoffel symbols c_ijk (first kind)'),
            ('G', robot.g, f'g ({n},): the gravity torques (B qdd + c + g = tau)'),
        ]
    doc = [
        f"{prefix}: symbolic_robot's export_functions, from spart_ros.symbolic_robot.",
        f'A {n}-link chain, joints {robot.jointTypes!r}; q ({n},): joint positions [rad or m].',
    ]
    try:
        code = generate_from_sympy(prefix, functions, list(robot.q), language, doc=doc, jit=jit)
    except CodegenError as error:
        raise CodegenError(f'export_functions: {error}') from None
    os.makedirs(out_dir, exist_ok=True)
    return code.write(out_dir)
