"""What to generate: models in, quantities parsed, functions built, files written."""

from dataclasses import dataclass, field
import json
import os
import re
import time

import numpy as np

from . import dynamics as dyn
from .expressions import CodegenError, Graph
from .. import __version__
from ..core.errors import SpartError
from ..core.invertibility import check_invertible
from ..core.model import Robot

#: the API (the other names are the generator's own steps)
__all__ = [
    'QUANTITIES',
    'DEFAULT_QUANTITIES',
    'MAX_OPERATIONS',
    'MAX_SECONDS',
    'GeneratedCode',
    'generate',
    'load_model',
    'parse_quantities',
]

#: Default limits (docs/symbolic_and_codegen.md, "Sizes and speed"): generation beyond them raises
#: CodegenLimitError naming the limit.  max_operations bounds one function's scalar
#: operations (what the compilers must digest), max_seconds one function's build time.
MAX_OPERATIONS = 20_000
MAX_SECONDS = 120.0

DEFAULT_QUANTITIES = ('H', 'C', 'bias', 'g', 'ID', 'FD')
#: quantity -> (function name, short name, one-line description on a fixed base, on a floating
#: base)
QUANTITIES = {
    'H': (
        'mass_matrix',
        'H',
        "H (n_q, n_q): the generalized inertia matrix (GIM's Hm)",
        "H (6 + n_q, 6 + n_q): the generalized inertia matrix for u = [u0; qd] (GIM's [H0 H0m; "
        "H0m' Hm])",
    ),
    'C': (
        'coriolis_matrix',
        'C',
        "C (n_q, n_q): SPART's convective inertia matrix (CIM's Cm, C = N'(M Ndot + W M N)); C qd "
        'is the Coriolis and centrifugal force',
        "C (6 + n_q, 6 + n_q): SPART's convective inertia matrix (CIM's [C0 C0m; Cm0 Cm]); C u is "
        'the Coriolis and centrifugal force',
    ),
    'bias': (
        'bias_forces',
        'bias',
        'bias (n_q,): C(q, qd) qd + g(q), the joint forces at zero acceleration',
        'bias (6 + n_q,): C u + g, the generalized forces at zero acceleration (ID with u0dot, '
        'qdd = 0)',
    ),
    'g': (
        'gravity_forces',
        'g',
        'g (n_q,): the joint forces that hold the robot still against gravity',
        'g (6 + n_q,): the generalized forces that hold the robot (and its base) still against '
        'gravity',
    ),
    'ID': (
        'inverse_dynamics',
        'ID',
        "tau (n_q,): H qdd + C qd + g (SPART ID's taum)",
        'tau (6 + n_q,): [tau0; taum] = H udot + C u + g (SPART ID; tau0 = [torque in the base '
        'frame; force in the inertial frame] at the base CoM)',
    ),
    'FD': (
        'forward_dynamics',
        'FD',
        "qdd (n_q,): H^-1 (tau - C qd - g) (SPART FD's umdot)",
        'udot (6 + n_q,): [u0dot; qdd] = H^-1 ([tau0; tau] - C u - g) (SPART FD)',
    ),
    'FID': (
        'floating_inverse_dynamics',
        'FID',
        None,
        '[u0dot; taum] (6 + n_q,): the base acceleration and the joint forces for the joint '
        'accelerations qdd with the base free, tau0 = 0 (SPART Floating_ID)',
    ),
    'J': (
        'jacobian',
        'J',
        'J (6, n_q) of the point: rows [angular velocity of the link; velocity of the point], '
        'inertial frame',
        'J (6, 6 + n_q) of the point: rows [angular velocity of the link; velocity of the point], '
        "inertial frame; columns u = [u0; qd] (SPART's [J0 Jm])",
    ),
    'pose': (
        'pose',
        'pose',
        'T (4, 4): the link CoM frame (origin at the point) in the inertial frame, '
        '[[RL, p], [0 0 0 1]]',
        'T (4, 4): the link CoM frame (origin at the point) in the inertial frame, '
        '[[RL, p], [0 0 0 1]]',
    ),
}
#: arguments of each quantity, fixed and floating base
ARGUMENTS = {
    'H': ('q',),
    'C': ('q', 'qd'),
    'bias': ('q', 'qd'),
    'g': ('q',),
    'ID': ('q', 'qd', 'qdd'),
    'FD': ('q', 'qd', 'tau'),
    'J': ('q',),
    'pose': ('q',),
}
FLOATING_ARGUMENTS = {
    'H': ('R0', 'q'),
    'C': ('R0', 'q', 'u0', 'qd'),
    'bias': ('R0', 'q', 'u0', 'qd'),
    'g': ('R0', 'q'),
    'ID': ('R0', 'q', 'u0', 'qd', 'u0dot', 'qdd'),
    'FD': ('R0', 'q', 'u0', 'qd', 'tau0', 'tau'),
    'FID': ('R0', 'q', 'u0', 'qd', 'qdd'),
    'J': ('R0', 'q'),
    'pose': ('R0', 'r0', 'q'),
}
RESULTS = {
    'H': 'H',
    'C': 'C',
    'bias': 'bias',
    'g': 'g',
    'ID': 'tau',
    'FD': 'qdd',
    'FID': 'out',
    'J': 'J',
    'pose': 'T',
}
_SPEC = re.compile(r'^(?P<kind>[A-Za-z]+)(?::(?P<link>[^@]+))?(?:@(?P<offset>.+))?$')


@dataclass
class Quantity:
    """
    One requested quantity.

    Kind (a key of QUANTITIES), link (SPART id) and offset for J/pose.
    """

    kind: str
    link: int = None
    offset: tuple = None
    link_name: str = None


@dataclass
class Function:
    """
    A generated function.

    ``name`` (and ``alias``), its arguments (name, shape), its result (name, shape) as graph values
    (row-major), and the figures of its generation: scalar operations with sharing, the same as
    trees (``tree_size``), seconds.
    """

    name: str
    alias: str
    description: str
    args: list
    result: str
    shape: tuple
    values: list
    graph: Graph
    seconds: float = 0.0
    operations: int = 0
    tree_size: int = 0
    checks: list = field(default_factory=list)
    quantity: Quantity = None

    @property
    def roots(self):
        return [v.id for v in self.values]


def load_model(model, xacro_args=None):
    """
    Return a Robot from ``model`` (a Robot, a URDF or SPART DH data), and a label of the source.

    A URDF: path or text, xacro expanded with ``xacro_args``; SPART DH data: a dict, or a .json /
    .yaml file laid out as DH_Serial2robot's input. Returns (robot, a label of the source for the
    generated files' header).
    """
    if isinstance(model, Robot):
        return model, f'Robot {model.name!r}'
    if isinstance(model, dict):
        from ..core.dh import robot_from_dh

        return robot_from_dh(model)[0], 'DH data'
    if isinstance(model, (str, bytes, os.PathLike)):
        text = os.fsdecode(model) if not isinstance(model, bytes) else None
        if text is not None and text.lower().endswith(('.json', '.yaml', '.yml')):
            return load_model(_read_dh(text))[0], f'DH data {os.path.basename(text)}'
        from ..core.urdf import robot_from_urdf

        robot, _ = robot_from_urdf(model, xacro_args=xacro_args)
        source = (
            os.path.basename(text)
            if text is not None and len(text) < 4096 and os.path.isfile(text)
            else 'URDF text'
        )
        return robot, source
    raise CodegenError(
        f'model: expected a Robot, a URDF path or text, or DH data, got {type(model).__name__}'
    )


def _read_dh(path):
    try:
        with open(path, encoding='utf-8') as f:
            if path.lower().endswith('.json'):
                return json.load(f)
            import yaml

            return yaml.safe_load(f)
    except (OSError, ValueError) as error:
        raise CodegenError(f'{path}: cannot read DH data ({error})') from None


def parse_quantities(quantities, robot):
    """
    Return [Quantity] of ``quantities`` (strings or tuples) for ``robot``; CodegenError if bad.

    Strings such as 'H', 'ID', 'J:tool0', 'pose:tool0@0,0,0.1'; tuples (kind, link[, offset]).
    """
    if isinstance(quantities, str):
        quantities = _split_specs(quantities)
    out = []
    for spec in quantities:
        if isinstance(spec, Quantity):
            q = spec
        elif isinstance(spec, str):
            m = _SPEC.match(spec.strip())
            if not m:
                raise CodegenError(
                    f'quantities: cannot read {spec!r} (expected e.g. H, ID, J:<link>, '
                    'pose:<link>@x,y,z)'
                )
            q = Quantity(m['kind'], m['link'], _offset(spec, m['offset']) if m['offset'] else None)
        elif isinstance(spec, (tuple, list)) and spec:
            q = Quantity(
                spec[0],
                spec[1] if len(spec) > 1 else None,
                tuple(spec[2]) if len(spec) > 2 else None,
            )
        else:
            raise CodegenError(
                f'quantities: {spec!r} is not a quantity (H, C, bias, g, ID, FD, J:<link>, '
                'pose:<link>)'
            )
        if q.kind not in QUANTITIES:
            raise CodegenError(
                f'quantities: unknown quantity {q.kind!r}; known: {", ".join(QUANTITIES)} '
                '(J and pose as J:<link>, pose:<link>, optionally @x,y,z: the point from the '
                'link CoM in the link CoM frame)'
            )
        if q.kind in ('J', 'pose'):
            if q.link is None:
                raise CodegenError(
                    f'quantities: {q.kind} needs a link: {q.kind}:<link name or SPART id>'
                )
            q.link = _link(robot, q.link)
            q.link_name = robot.link_names[q.link]
            if q.offset is not None:
                offset = np.asarray(q.offset, dtype=float)
                if offset.shape != (3,) or not np.all(np.isfinite(offset)):
                    raise CodegenError(
                        f'quantities: {q.kind}:{q.link_name} offset must be 3 finite numbers, '
                        f'got {q.offset!r}'
                    )
                q.offset = tuple(float(x) for x in offset)
        elif q.link is not None or q.offset is not None:
            raise CodegenError(f'quantities: {q.kind} takes no link')
        if q not in out:
            out.append(q)
    if not out:
        raise CodegenError('quantities: none given')
    return out


def _split_specs(text):
    """Split 'H,J:a@0,0,1,ID' at the commas that start a new quantity."""
    parts = []
    for token in text.split(','):
        if (
            parts
            and re.fullmatch(r'\s*[-+0-9.eE]+\s*', token)
            and '@' in parts[-1]
            and parts[-1].split('@', 1)[1].count(',') < 2
        ):
            parts[-1] += ',' + token
        elif token.strip():
            parts.append(token)
    return parts


def _offset(spec, text):
    try:
        values = [float(x) for x in text.split(',')]
    except ValueError:
        values = []
    if len(values) != 3:
        raise CodegenError(f'quantities: {spec!r}: the offset after @ must be x,y,z (3 numbers)')
    return tuple(values)


def _link(robot, link):
    if isinstance(link, str) and link.strip().lstrip('-').isdigit():
        link = int(link)
    if isinstance(link, str):
        try:
            return robot.link_index(link.strip())
        except SpartError:
            raise CodegenError(
                f'quantities: unknown link {link!r}; robot {robot.name!r} has links '
                f'{robot.link_names}'
            ) from None
    if (
        isinstance(link, (int, np.integer))
        and not isinstance(link, bool)
        and 0 <= link <= robot.n_links_joints
    ):
        return int(link)
    raise CodegenError(
        f'quantities: link {link!r} is not a link of robot {robot.name!r} (ids 0..'
        f'{robot.n_links_joints} or names {robot.link_names})'
    )


def identifier(text):
    """Return a C and Python identifier from a name ('lbr_iiwa_link_7', 'kuka_iiwa')."""
    out = re.sub(r'\W', '_', text, flags=re.ASCII).strip('_') or 'robot'
    return out if not out[0].isdigit() else '_' + out


def _shape(arg, nq):
    return {'R0': (3, 3), 'r0': (3,), 'u0': (6,), 'u0dot': (6,), 'tau0': (6,)}.get(arg, (nq,))


def build_function(
    robot, base_frame_, quantity, gravity, floating, max_operations, max_seconds, names_taken
):
    """
    Return the Function computing ``quantity`` (graph built, figures measured).

    ``base_frame_`` the fixed base's (R0, r0), unused for a floating base.
    """
    name, alias, fixed_text, floating_text = QUANTITIES[quantity.kind]
    description = floating_text if floating else fixed_text
    if description is None:
        raise CodegenError(f"quantities: {quantity.kind} is for a floating base (base='floating')")
    if quantity.link is not None:
        stem = identifier(quantity.link_name)
        name, alias = f'{name}_{stem}', f'{alias}_{stem}'
        k = 2
        while name in names_taken:
            name, alias = (
                f'{QUANTITIES[quantity.kind][0]}_{stem}_{k}',
                f'{QUANTITIES[quantity.kind][1]}_{stem}_{k}',
            )
            k += 1
        at = (
            'CoM'
            if not quantity.offset or not any(quantity.offset)
            else f'point {list(quantity.offset)} from the CoM in the link CoM frame'
        )
        description = (
            f'{description}; link {quantity.link_name!r} (SPART id {quantity.link}), {at}'
        )
    names_taken.add(name)
    t = time.perf_counter()
    graph = Graph(
        max_operations, max_seconds, what=f'{alias} of robot {robot.name!r} ({robot.n_q} joints)'
    )
    model = dyn.TreeModel(robot, base_frame_[0], base_frame_[1], gravity)
    nq = robot.n_q
    kind = quantity.kind
    argnames = (FLOATING_ARGUMENTS if floating else ARGUMENTS)[kind]
    args = {a: graph.inputs(a, int(np.prod(_shape(a, nq)))) for a in argnames}
    zeros = [graph.zero] * nq
    R0 = [args['R0'][3 * r : 3 * r + 3] for r in range(3)] if floating else None
    kin = dyn.Kinematics(graph, model, args['q'])
    what = f'H of robot {robot.name!r}'
    if kind in ('FD', 'FID'):
        # SingularModelError naming a joint (or the base) that moves no mass
        check_invertible(robot, floating=floating, base_only=kind == 'FID')

    def base(u0dot=None, gravity_=True):
        return dyn.Base(graph, model, R0, args.get('u0'), u0dot, gravity_)

    if kind == 'H':
        rows = dyn.mass_matrix(kin, base())
    elif kind == 'C':
        rows = dyn.coriolis_matrix(kin, base(), args['qd'])
    elif kind == 'bias':
        rows = [dyn.inverse_dynamics(kin, base(), args['qd'], zeros)]
    elif kind == 'g':
        rows = [dyn.inverse_dynamics(kin, dyn.Base(graph, model, R0), zeros, zeros)]
    elif kind == 'ID':
        rows = [dyn.inverse_dynamics(kin, base(args.get('u0dot')), args['qd'], args['qdd'])]
    elif kind == 'FD':
        tau = (args['tau0'] if floating else []) + args['tau']
        rows = [dyn.forward_dynamics(kin, base(), args['qd'], tau, what)]
    elif kind == 'FID':
        rows = [
            dyn.floating_inverse_dynamics(
                kin, base(), args['qd'], args['qdd'], f'H0 of robot {robot.name!r}'
            )
        ]
    elif kind == 'J':
        rows = dyn.jacobian(kin, base(), quantity.link, quantity.offset)
    else:
        r0 = args['r0'] if floating else model.r0.tolist()
        rows = dyn.pose(kin, base(), r0, quantity.link, quantity.offset)
    shape = (len(rows), len(rows[0])) if kind in ('H', 'C', 'J', 'pose') else (len(rows[0]),)
    values = [graph.var(v) for row in rows for v in row]
    result = 'udot' if floating and kind == 'FD' else RESULTS[kind]
    f = Function(
        name,
        alias,
        description,
        [(a, _shape(a, nq)) for a in argnames],
        result,
        shape,
        values,
        graph,
        checks=list(graph.checks),
        quantity=quantity,
    )
    f.operations = graph.operation_count(f.roots + [i for i, _ in f.checks])
    f.tree_size = graph.tree_size([v.id for v in values])
    f.seconds = time.perf_counter() - t
    return f


@dataclass
class GeneratedCode:
    """
    The generated files (``files``: {file name: text}), the functions and the model they came from.

    ``robot`` (None for code from sympy expressions), ``name`` (the module / C prefix),
    ``functions``, and ``header``: the facts written into each file's header (source, conventions,
    versions).
    """

    robot: Robot
    name: str
    functions: list
    files: dict
    header: dict

    def write(self, out_dir):
        """Write every file into ``out_dir`` (created if needed); returns their paths."""
        os.makedirs(out_dir, exist_ok=True)
        paths = []
        for fname, text in self.files.items():
            path = os.path.join(out_dir, fname)
            with open(path, 'w', encoding='utf-8') as f:
                f.write(text)
            paths.append(path)
        return paths

    def summary(self):
        """Return one line per function: operations with and without sharing, build time."""
        source = (
            f'robot {self.robot.name!r}, {self.robot.n_q} joints'
            if self.robot is not None
            else 'sympy expressions'
        )
        lines = [
            f'{self.name}: {source}; files '
            + ', '.join(f'{k} ({len(v)} bytes)' for k, v in self.files.items())
        ]
        for f in self.functions:
            lines.append(
                f'  {f.alias:<16} {f.operations:>8} operations (as trees without shared '
                f'subexpressions: {f.tree_size:.3g}), built in {f.seconds:.3f} s'
            )
        return '\n'.join(lines)


def base_frame(robot, base_pose):
    """
    Return SPART's (R0, r0) of the base CoM frame from the URDF base LINK frame pose.

    ``base_pose``: that pose (4x4) in the inertial frame (default: the URDF's fixed world joint if
    any, else the identity).
    """
    from ..core.base_state import base_from_link_frame

    if base_pose is None:
        base_pose = robot.base_pose if robot.base_pose is not None else np.eye(4)
    T = np.asarray(base_pose, dtype=float)
    if T.shape != (4, 4) or not np.all(np.isfinite(T)):
        raise CodegenError(f'base_pose: expected a 4x4 homogeneous transform, got shape {T.shape}')
    try:
        R0, r0, _ = base_from_link_frame(robot, T[:3, :3], T[:3, 3])
    except SpartError as error:
        raise CodegenError(f'base_pose: {error}') from None
    return R0, r0, T


def generate(
    model,
    quantities=DEFAULT_QUANTITIES,
    language='python',
    *,
    name=None,
    base='fixed',
    base_pose=None,
    gravity=None,
    jit=True,
    max_operations=MAX_OPERATIONS,
    max_seconds=MAX_SECONDS,
    xacro_args=None,
):
    """
    Return the standalone code for ``model`` (a Robot, a URDF path or text, DH data).

    ``quantities``: H, C, bias, g, ID, FD, FID (floating base), J:<link>[@x,y,z],
    pose:<link>[@x,y,z] (a list or a comma-separated string; link = URDF link name or SPART id;
    the point's offset from the link CoM in the link CoM frame, as the core's point_jacobian).
    ``language``: 'python' (one module, numpy only; numba-jitted at import if numba is there
    and ``jit``), 'c' (a .c and a .h), or 'all'.  ``base``: 'fixed' (the base CoM frame fixed
    at ``base_pose``: the URDF base link frame in the inertial frame, 4x4; default the URDF's
    world joint or the identity) or 'floating' (SPART's floating base: R0, r0, u0 are run-time
    inputs, u = [u0; qd], results as SPART's).  ``gravity`` (3,) m/s^2 in the inertial frame,
    part of the code: default (0, 0, -9.81) on a fixed base, zero on a floating one (a
    spacecraft; FastDynamics' default).  ``name``: the module / file / C prefix (default: the
    robot's name made an identifier).

    ``xacro_args``: arguments of a xacro ``model``.  Raises CodegenError (a bad model or request)
    and CodegenLimitError (a function needs more
    than ``max_operations`` operations or ``max_seconds`` to build).
    """
    from .printers import c_files, python_module

    robot, source = load_model(model, xacro_args)
    if base not in ('fixed', 'floating'):
        raise CodegenError(f"base: expected 'fixed' or 'floating', got {base!r}")
    if robot.symbolic:
        raise CodegenError(
            f'robot {robot.name!r} is symbolic: codegen needs numeric masses, inertias and frames '
            '(spart_ros.symbolic works on symbolic models)'
        )
    if robot.n_q == 0:
        raise CodegenError(f'robot {robot.name!r} has no moving joint: nothing to generate')
    if language not in ('python', 'c', 'all'):
        raise CodegenError(f"language: expected 'python', 'c' or 'all', got {language!r}")
    if gravity is None:
        gravity = (0.0, 0.0, 0.0) if base == 'floating' else (0.0, 0.0, -9.81)
    g = np.asarray(gravity, dtype=float)
    if g.shape != (3,) or not np.all(np.isfinite(g)):
        raise CodegenError(
            f'gravity: expected 3 finite numbers (m/s^2, inertial frame), got {gravity!r}'
        )
    name = identifier(name or robot.name)
    floating = base == 'floating'
    if floating:
        if base_pose is not None:
            raise CodegenError(
                'base_pose: a floating base takes its pose (R0, r0) at run time, not at generation'
            )
        R0, r0, T = np.eye(3), np.zeros(3), None
    else:
        R0, r0, T = base_frame(robot, base_pose)
    specs = parse_quantities(quantities, robot)
    taken = set()
    functions = [
        build_function(robot, (R0, r0), q, g, floating, max_operations, max_seconds, taken)
        for q in specs
    ]
    header = {
        'name': name,
        'robot': robot,
        'source': source,
        'version': __version__,
        'gravity': g,
        'R0': R0,
        'r0': r0,
        'base_pose': T,
        'floating': floating,
    }
    files = {}
    if language in ('python', 'all'):
        files[f'{name}.py'] = python_module(header, functions, jit)
    if language in ('c', 'all'):
        files.update(c_files(header, functions))
    return GeneratedCode(robot, name, functions, files, header)
