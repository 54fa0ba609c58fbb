"""
The compiled bounded least squares equals scipy's BVLS (``lsq_linear(..., method='bvls')``).

:class:`spart_ros.control.bounded_least_squares.BoundedLeastSquares` ports scipy's active-set
steps, so it should end at scipy's point, also where the minimizer is not unique (more variables
than rows: the thruster allocation's 6 x 16).  Random problems of the allocation's shapes
(overdetermined, square, underdetermined; bounds on both sides of zero, or from zero as a
thruster's), the solutions compared to scipy's to 1e-12 of the bounds' span (rounding: measured
up to 1.4e-14); bad shapes and bounds are InputErrors naming the problem.
"""

import numpy as np
import pytest
from spart_ros.control.bounded_least_squares import BoundedLeastSquares
from spart_ros.core.errors import InputError

SHAPES = ((8, 5), (12, 12), (6, 16), (25, 16), (3, 4))


@pytest.mark.parametrize('m, n', SHAPES)
def test_the_solution_is_scipys(m, n):
    from scipy.optimize import lsq_linear

    rng = np.random.default_rng(m * 100 + n)
    solver = BoundedLeastSquares(m, n)
    active = 0
    for k in range(40):
        A = rng.standard_normal((m, n))
        b = rng.standard_normal(m) * rng.uniform(0.5, 5.0)
        lb, ub = -rng.uniform(0.05, 1.0, n), rng.uniform(0.05, 1.0, n)
        if k % 3 == 0:  # a thruster's: from zero
            lb = np.zeros(n)
        x = solver.solve(A, b, lb, ub, tol=1e-14)
        ref = lsq_linear(A, b, bounds=(lb, ub), method='bvls', tol=1e-14).x
        assert np.abs(x - ref).max() <= 1e-12 * np.abs(ub - lb).max(), (k, x, ref)
        slack = 1e-14 * np.abs(ub - lb).max()  # on a bound to rounding, as scipy's (callers clip)
        assert np.all(x >= lb - slack) and np.all(x <= ub + slack)
        active += np.count_nonzero(solver.active)
    assert active > 0  # the bounds were reached: the active-set steps ran, not only the start


def test_a_smaller_problem_fits_and_wrong_inputs_are_named():
    solver = BoundedLeastSquares(6, 4)
    x = solver.solve(np.eye(3), [2.0, -0.5, 0.1], -np.ones(3), np.ones(3))
    np.testing.assert_allclose(x, [1.0, -0.5, 0.1], rtol=0, atol=1e-15)
    with pytest.raises(InputError, match='do not match'):
        solver.solve(np.eye(3), [1.0, 2.0], -np.ones(3), np.ones(3))
    with pytest.raises(InputError, match='every lower bound must be below its upper'):
        solver.solve(np.eye(3), np.zeros(3), np.zeros(3), np.ones(3) * [1, 0, 1])
    with pytest.raises(InputError, match='larger than this solver'):
        solver.solve(np.ones((7, 3)), np.zeros(7), -np.ones(3), np.ones(3))
