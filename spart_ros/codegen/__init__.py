"""
Code generation: standalone Python (numpy, optionally numba) and C from a robot model.

    from spart_ros import codegen
    code = codegen.generate('robot.urdf', ['H', 'ID', 'FD', 'J:tool0'], language='all')
    code.write('out/')          # out/<robot>.py, out/<robot>.c, out/<robot>.h
    print(code.summary())

or ``python -m spart_ros.codegen robot.urdf --quantities H,ID --out DIR [--language
python|c|all]``.

The generated functions compute, for a FIXED-base robot, the quantities of the core in its
conventions (SPART's joint order and frames; results equal to the core's to 1e-12):
H (mass matrix), C (SPART's convective matrix), bias (C qd + g), g (gravity forces), ID, FD,
the Jacobian and the pose of a point on a link.  They are unrolled recursive algorithms
(:mod:`.dynamics`) on an expression graph that shares every common subexpression
(:mod:`.expressions`), printed as straight-line code (:mod:`.printers`).  A floating base
is refused (CodegenError, with the reason); a model beyond the size limits raises
CodegenLimitError naming the limit.
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

__all__ = [
    'CodegenError',
    'CodegenLimitError',
    'DEFAULT_QUANTITIES',
    'MAX_OPERATIONS',
    'MAX_SECONDS',
    'QUANTITIES',
    'GeneratedCode',
    'generate',
    'load_model',
    'parse_quantities',
    'compile_c',
    'load_c',
    'load_python',
]
