"""
Compiled bounded least squares (numba): scipy's BVLS without its Python, for the allocations.

:func:`bvls` is ``scipy.optimize.lsq_linear(A, b, bounds=(lb, ub), method='bvls', tol=tol,
max_iter=max_iter).x`` written out: the same unbounded start (returned as it is when it is within
the bounds), the same initialization loop, the same active-set loops A and B and the same
termination tests, step by step in the same order, so that it takes the same path and ends at the
same point to rounding (also where the minimizer is not unique: an underdetermined allocation).
The least-squares subproblems are solved as numpy's ``lstsq`` (LAPACK's gelsd) solves them, the
minimum-norm solution with the singular values below ``rcond`` times the largest taken as zero
(``rcond``: LAPACK's machine epsilon for the unbounded start, as lsq_linear's ``rcond=-1``;
numpy's epsilon times the larger dimension in the loops, as lstsq's default), here by a
one-sided Jacobi SVD (:func:`_min_norm_solve`), which LAPACK's bidiagonal SVD equals to rounding.

Used by :class:`spart_ros.control.allocation.WrenchAllocator` (every thruster cycle) and the
wheels' bounded torques (:class:`spart_ros.control.base_actuation.BaseActuatorControl`), through
:class:`spart_ros.control.bounded_least_squares.BoundedLeastSquares` (the workspaces).  No kernel
allocates.
"""

import math

from .kernels import compiled

#: float64 machine epsilon (numpy's finfo.eps: lstsq's default rcond is EPS * max(m, n)) and
#: LAPACK's (dlamch('E') = EPS / 2: gelsd's rcond when it is given < 0, as lsq_linear does)
EPS = 2.220446049250313e-16
LAPACK_EPS = 1.1102230246251565e-16
#: rows of the ``vectors`` workspace (each of length max(m, n))
VECTORS = 9
#: one-sided Jacobi: sweeps at most, and the relative orthogonality at which a pair is left
_SWEEPS = 60
_ORTHOGONAL = 1e-15


@compiled
def _min_norm_solve(A, m, cols, k, rhs, rcond, T, V, s, z):
    """
    Set ``z[:k]`` to the minimum-norm least-squares solution of ``A[:m, cols[:k]] z = rhs[:m]``.

    One-sided Jacobi (Hestenes) on the columns of B = A[:m, cols] (m >= k) or of B' (m < k):
    rotations of pairs of vectors (rows of ``T``) until every pair is orthogonal, accumulated in
    ``V``; the vectors' norms are the singular values ``s``; those <= ``rcond`` times the largest
    count as zero (gelsd's rank).  Returns the rank.
    """
    if k == 0:
        return 0
    if m >= k:  # the vectors: B's columns
        p, length = k, m
        for j in range(k):
            c = cols[j]
            for i in range(m):
                T[j, i] = A[i, c]
    else:  # B's rows (the columns of B')
        p, length = m, k
        for j in range(m):
            for i in range(k):
                T[j, i] = A[j, cols[i]]
    for a in range(p):
        for b in range(p):
            V[a, b] = 0.0
        V[a, a] = 1.0
    for _ in range(_SWEEPS):
        rotated = False
        for a in range(p - 1):
            for b in range(a + 1, p):
                alpha = beta = gamma = 0.0
                for i in range(length):
                    x, y = T[a, i], T[b, i]
                    alpha += x * x
                    beta += y * y
                    gamma += x * y
                if gamma == 0.0 or abs(gamma) <= _ORTHOGONAL * math.sqrt(alpha * beta):
                    continue
                rotated = True
                zeta = (beta - alpha) / (2.0 * gamma)
                t = math.copysign(1.0, zeta) / (abs(zeta) + math.sqrt(1.0 + zeta * zeta))
                c = 1.0 / math.sqrt(1.0 + t * t)
                sn = c * t
                for i in range(length):
                    x, y = T[a, i], T[b, i]
                    T[a, i] = c * x - sn * y
                    T[b, i] = sn * x + c * y
                for i in range(p):
                    x, y = V[i, a], V[i, b]
                    V[i, a] = c * x - sn * y
                    V[i, b] = sn * x + c * y
        if not rotated:
            break
    largest = 0.0
    for a in range(p):
        acc = 0.0
        for i in range(length):
            acc += T[a, i] * T[a, i]
        s[a] = math.sqrt(acc)
        largest = max(largest, s[a])
    cut = rcond * largest
    for j in range(k):
        z[j] = 0.0
    rank = 0
    for a in range(p):
        if s[a] <= cut or s[a] == 0.0:
            continue
        rank += 1
        w = 1.0 / (s[a] * s[a])
        if m >= k:  # z = sum_a V[:, a] (T[a] . rhs) / s_a^2
            d = 0.0
            for i in range(m):
                d += T[a, i] * rhs[i]
            d *= w
            for j in range(k):
                z[j] += V[j, a] * d
        else:  # z = sum_a T[a] (V[:, a] . rhs) / s_a^2
            d = 0.0
            for i in range(m):
                d += V[i, a] * rhs[i]
            d *= w
            for j in range(k):
                z[j] += T[a, j] * d
    return rank


@compiled
def _residual(A, x, b, r):
    """Set r = A x - b; return 0.5 |r|^2."""
    m, n = A.shape
    cost = 0.0
    for i in range(m):
        acc = 0.0
        for j in range(n):
            acc += A[i, j] * x[j]
        r[i] = acc - b[i]
        cost += r[i] * r[i]
    return 0.5 * cost


@compiled
def _gradient(A, r, g):
    """Set g = A' r."""
    m, n = A.shape
    for j in range(n):
        acc = 0.0
        for i in range(m):
            acc += A[i, j] * r[i]
        g[j] = acc


@compiled
def _free_rhs(A, b, x, on_bound, out):
    """Set out = b - A (x on the bounds only): the right side of the free variables' problem."""
    m, n = A.shape
    for i in range(m):
        acc = 0.0
        for j in range(n):
            if on_bound[j] != 0.0:
                acc += A[i, j] * x[j]
        out[i] = b[i] - acc


@compiled
def _optimality(g, on_bound):
    """Return the largest violation of the KKT conditions (scipy's compute_kkt_optimality)."""
    best = -math.inf
    for j in range(g.shape[0]):
        v = abs(g[j]) if on_bound[j] == 0.0 else g[j] * on_bound[j]
        if v > best:
            best = v
    return best


@compiled
def bvls(A, b, lb, ub, tol, max_iter, active, x, T, V, vectors, index):
    """
    Set ``x`` (n,) = lsq_linear(A, b, bounds=(lb, ub), method='bvls', tol, max_iter).x.

    ``A`` (m, n), ``b`` (m,), ``lb`` < ``ub`` (n,); ``max_iter`` < 0: scipy's default (n).
    ``active`` (n,): set to the variables' state at the end (-1 at the lower bound, 1 at the
    upper, 0 free).  Workspaces (N = max(m, n)): ``T``, ``V`` (N, N),
    ``vectors`` (VECTORS, N), ``index`` (2 N,) int64.  Returns scipy's termination status (0:
    max_iter reached, 1: optimality below tol, 2: cost change below tol; 3: the unbounded
    solution is within the bounds), -1 when a workspace is too small.
    """
    m, n = A.shape
    big = max(m, n)
    if (
        T.shape[0] < big
        or T.shape[1] < big
        or V.shape[0] < big
        or V.shape[1] < big
        or vectors.shape[0] < VECTORS
        or vectors.shape[1] < big
        or index.shape[0] < 2 * big
        or active.shape[0] < n
    ):
        return -1
    on_bound, r, g = vectors[0], vectors[1], vectors[2]
    rhs, z, s, alphas = vectors[3], vectors[4], vectors[5], vectors[6]
    free, v = index[0:big], index[big : 2 * big]
    # the unbounded least-squares solution (lstsq, rcond=-1: LAPACK's machine epsilon)
    for j in range(n):
        free[j] = j
    _min_norm_solve(A, m, free, n, b, LAPACK_EPS, T, V, s, z)
    inside = True
    for j in range(n):
        x[j] = z[j]
        inside = inside and lb[j] <= x[j] <= ub[j]
    if inside:
        for j in range(n):
            active[j] = 0.0
        return 3
    # scipy's bvls: the start on the bounds it violates
    nfree = 0
    for j in range(n):
        on_bound[j] = 0.0
        if x[j] <= lb[j]:
            x[j] = lb[j]
            on_bound[j] = -1.0
        elif x[j] >= ub[j]:
            x[j] = ub[j]
            on_bound[j] = 1.0
        else:
            free[nfree] = j
            nfree += 1
    cost = _residual(A, x, b, r)
    _gradient(A, r, g)
    iteration = 0
    # the initialization loop: least squares on the free variables until it is feasible
    while nfree > 0:
        iteration += 1
        _free_rhs(A, b, x, on_bound, rhs)
        _min_norm_solve(A, m, free, nfree, rhs, EPS * max(m, nfree), T, V, s, z)
        kept = 0
        violated = False
        for i in range(nfree):
            j = free[i]
            if z[i] < lb[j]:
                x[j] = lb[j]
                on_bound[j] = -1.0
                violated = True
            elif z[i] > ub[j]:
                x[j] = ub[j]
                on_bound[j] = 1.0
                violated = True
            else:
                x[j] = z[i]
                free[kept] = j
                kept += 1
        cost = _residual(A, x, b, r)
        _gradient(A, r, g)
        if violated:
            nfree = kept
        else:
            break
    last = (n if max_iter < 0 else max_iter) + iteration
    status = -2  # None
    optimality = _optimality(g, on_bound)
    for iteration in range(iteration, last):  # loop A
        if optimality < tol:
            status = 1
        if status != -2:
            break
        move, best = 0, -math.inf
        for j in range(n):
            gj = g[j] * on_bound[j]
            if gj > best:
                move, best = j, gj
        on_bound[move] = 0.0
        while True:  # loop B
            nfree = 0
            for j in range(n):
                if on_bound[j] == 0.0:
                    free[nfree] = j
                    nfree += 1
            _free_rhs(A, b, x, on_bound, rhs)
            _min_norm_solve(A, m, free, nfree, rhs, EPS * max(m, nfree), T, V, s, z)
            nv = 0  # the violations: below their lower bounds first, then above the upper
            for i in range(nfree):
                if z[i] < lb[free[i]]:
                    v[nv] = i
                    nv += 1
            nlow = nv
            for i in range(nfree):
                if z[i] > ub[free[i]]:
                    v[nv] = i
                    nv += 1
            if nv == 0:
                for i in range(nfree):
                    x[free[i]] = z[i]
                break
            pick, alpha = 0, math.inf
            for q in range(nv):
                i = v[q]
                j = free[i]
                bound = lb[j] if q < nlow else ub[j]
                alphas[q] = (bound - x[j]) / (z[i] - x[j])
                if alphas[q] < alpha:
                    pick, alpha = q, alphas[q]
            for i in range(nfree):
                j = free[i]
                x[j] = x[j] * (1.0 - alpha) + alpha * z[i]
            on_bound[free[v[pick]]] = -1.0 if pick < nlow else 1.0
        cost_new = _residual(A, x, b, r)
        if cost - cost_new < tol * cost:
            status = 2
        cost = cost_new
        _gradient(A, r, g)
        optimality = _optimality(g, on_bound)
    for j in range(n):
        active[j] = on_bound[j]
    return 0 if status == -2 else status
