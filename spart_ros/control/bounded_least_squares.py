"""
Bounded-variable least squares, compiled: scipy's ``lsq_linear(..., method='bvls')`` per call.

:class:`BoundedLeastSquares` holds the workspaces of one problem size and solves
``min |A x - b|`` over ``lb <= x <= ub`` with the compiled port of scipy's BVLS
(:func:`spart_ros.native.least_squares.bvls`: the same start, active-set steps and termination,
so the same point to rounding, also where the minimizer is not unique).  scipy's call costs
0.2-0.5 ms on the allocation's problems (its Python around LAPACK); this one 10-150 us.

Not warm-started from the last thruster cycle's bounds (measured: the allocation's second step
from the last cycle's active set costs 35-65 us instead of 120-170, but it ends elsewhere within
scipy's own stopping rule: that problem's smallest curvature is epsilon^2 = 1e-10, so a gradient
below its tol of 1e-14 leaves the point free to 1e-4 of the scaled thrust, and a warm start
lands on another point there: thrusts 3 % apart on small wrenches; the cold start is scipy's
path, the same to rounding).

Shapes: ``A`` (m, n), ``b`` (m,), ``lb``, ``ub``, the solution (n,).
"""

import numpy as np

from ..core.errors import InputError
from ..native.compiled import bvls as _bvls
from ..native.least_squares import VECTORS

__all__ = ['BoundedLeastSquares']


class BoundedLeastSquares:
    """
    ``lsq_linear(A, b, bounds=(lb, ub), method='bvls', tol=tol, max_iter=max_iter).x``, compiled.

    ``m``, ``n``: the largest problem (rows, variables) it solves; smaller ones fit too.
    """

    def __init__(self, m, n):
        big = max(int(m), int(n), 1)
        self.shape = (int(m), int(n))
        self._T = np.zeros((big, big))
        self._V = np.zeros((big, big))
        self._vectors = np.zeros((VECTORS, big))
        self._index = np.zeros(2 * big, dtype=np.int64)
        #: (n,) the last solution's variables: -1 at their lower bound, 1 at the upper, 0 free
        self.active = np.zeros(int(n))

    def solve(self, A, b, lb, ub, tol=1e-10, max_iter=None):
        """
        Return x (n,): the bounded least-squares solution, as scipy's BVLS finds it.

        ``A`` (m, n), ``b`` (m,), ``lb`` < ``ub`` (n,) (strictly: pin an equal pair as
        lsq_linear's callers do); ``tol``, ``max_iter``: lsq_linear's (None: n).  InputError on
        shapes this solver was not made for or on bounds that are not strictly ordered.
        """
        A = np.ascontiguousarray(A, dtype=float)
        m, n = A.shape
        b = np.ascontiguousarray(b, dtype=float).reshape(-1)
        lb = np.ascontiguousarray(lb, dtype=float).reshape(-1)
        ub = np.ascontiguousarray(ub, dtype=float).reshape(-1)
        if b.shape != (m,) or lb.shape != (n,) or ub.shape != (n,):
            raise InputError(
                f'bounded least squares: A {A.shape}, b {b.shape}, bounds {lb.shape} and '
                f'{ub.shape} do not match'
            )
        if not np.all(lb < ub):
            raise InputError('bounded least squares: every lower bound must be below its upper')
        x = np.empty(n)
        if self.active.shape != (n,):
            self.active = np.zeros(n)
        status = _bvls(
            A,
            b,
            lb,
            ub,
            float(tol),
            -1 if max_iter is None else int(max_iter),
            self.active,
            x,
            self._T,
            self._V,
            self._vectors,
            self._index,
        )
        if status < 0:
            raise InputError(
                f'bounded least squares: a {m} x {n} problem is larger than this solver '
                f'({self.shape[0]} x {self.shape[1]})'
            )
        return x
