"""
Code generation: standalone Python (numpy, optionally numba) and C from a robot model.

    from spart_ros import codegen
    code = codegen.generate('robot.urdf', ['H', 'ID', 'FD', 'J:tool0'], language='all')
    code.write('out/')          # out/<robot>.py, out/<robot>.c, out/<robot>.h
    print(code.summary())
    codegen.generate('SC_3DoF.urdf', ['H', 'FD', 'FID'], base='floating')

or ``python -m spart_ros.codegen robot.urdf --quantities H,ID --out DIR [--language
python|c|all] [--base fixed|floating]``.

The generated functions compute the quantities of the core in its conventions (SPART's joint
order and frames; results equal to the core's to 1e-12), on a fixed base (``base='fixed'``, the
default: the base CoM frame fixed at ``base_pose``, by default the URDF's world joint or the
identity; functions of q, qd, qdd) or on SPART's floating base (``base='floating'``: R0, r0 and
the base velocity u0 are run-time inputs, u = [u0; qd]): H (mass matrix), C (SPART's convective
matrix), bias (C u + g), g (gravity forces), ID, FD, FID (floating base only: the base
acceleration and joint forces of SPART's Floating_ID), the Jacobian and the pose of a point on a
link.  They are unrolled recursive algorithms (:mod:`.dynamics`) on an expression graph that
shares every common subexpression (:mod:`.expressions`), printed as straight-line code
(:mod:`.printers`).  A bad model or request (a symbolic model, FID on a fixed base, an unknown
quantity or link) raises CodegenError naming the problem; a model beyond the size limits raises
CodegenLimitError naming the limit.  :func:`generate_from_sympy` prints closed forms (sympy
expressions of q, e.g. ``spart_ros.symbolic_robot``'s) through the same graph and printers.
"""

from .build import compile_c, load_c, load_python
from .expressions import CodegenError, CodegenLimitError
from .generator import (
    DEFAULT_QUANTITIES,
    generate,
    GeneratedCode,
    load_model,
    MAX_OPERATIONS,
    MAX_SECONDS,
    parse_quantities,
    QUANTITIES,
)
from .sympy_code import generate_from_sympy

__all__ = [
    'CodegenError',
    'CodegenLimitError',
    'DEFAULT_QUANTITIES',
    'MAX_OPERATIONS',
    'MAX_SECONDS',
    'QUANTITIES',
    'GeneratedCode',
    'generate',
    'generate_from_sympy',
    'load_model',
    'parse_quantities',
    'compile_c',
    'load_c',
    'load_python',
]
