"""
Symbolic models that pay off: simplified closed forms, Christoffel symbols, analytic Jacobians.

    from spart_ros.symbolic import SymbolicModel
    m = SymbolicModel(robot)               # a Robot (numbers made exact) or a symbolic
    RobotBuilder model
    m.mass_matrix(), m.christoffel(), m.christoffel_matrix(), m.gravity_forces()
    m.jacobian('tool'), m.analytic_jacobian('tool', sequence='ZYX'), m.reports

Everything here needs sympy and is imported on demand only (nodes never import it).  Code
generation from a model is :mod:`spart_ros.codegen`; numeric analytic Jacobians are in
:mod:`spart_ros.core.analytic_jacobian`.
"""

from .exact import exact_number, exact_robot
from .model import SymbolicModel
from .simplify import count_ops, cse, reduce_trig, simplify, SimplifyReport

__all__ = [
    'SymbolicModel',
    'SimplifyReport',
    'count_ops',
    'cse',
    'exact_number',
    'exact_robot',
    'reduce_trig',
    'simplify',
]
