"""
Simplification of symbolic results: trigonometric reduction, compaction and CSE.

:func:`simplify` runs, entry by entry,

1. a *reduction* to a canonical polynomial in the cosines and sines of the angles: expand,
   replace every ``sin(x)**2`` by ``1 - cos(x)**2``, expand again.  Cheap, and it cancels
   what must cancel (``c**2 + s**2`` terms), which is where the size goes: SC_3DoF's H drops
   from 3342 to 64 operations in 0.1 s;
2. a *compaction* with sympy's ``fu`` and ``trigsimp`` (sums of angles, double angles),
   keeping the smallest of the candidates.

Every step runs under a time limit (SIGALRM, in the main thread; elsewhere only the size
limit applies) and is skipped for entries larger than ``max_ops`` operations: an entry that
does not finish is kept as the previous step left it, and the report says so.  Nothing
here changes a value: the tests substitute random numbers before and after.

:func:`cse` hoists common subexpressions (sympy.cse) for reading or for code.
"""

from dataclasses import dataclass, field
import signal
import threading
import time

import sympy

#: Default time limit of one step on one entry, seconds.
TIME_LIMIT = 2.0
#: Entries with more operations than this are not expanded (expansion can grow exponentially).
MAX_OPS = 20_000
#: Default time limit of one simplify() call (a whole matrix), seconds.
TOTAL_LIMIT = 60.0


REARM_INTERVAL = 0.05  # s between repeated alarms once the limit is reached


class _TimeUp(BaseException):
    """Raised by the alarm (a BaseException: sympy's own ``except Exception`` must not eat it)."""


def call_with_time_limit(seconds, fn, *args):
    """
    Return ``fn(*args)``, or raise _TimeUp once it has run ``seconds`` (main thread only).

    Elsewhere there is no limit. The alarm repeats every :data:`REARM_INTERVAL` s until ``fn``
    returns: Python drops an exception raised in a gc callback or a ``__del__``, so a single alarm
    can be lost. The alarm raises only while ``fn`` runs (a function, not a ``with`` block: an
    alarm between a block's end and its ``__exit__`` would escape, the timer still armed). An
    interval timer already running (pytest-timeout's, for one) keeps its deadline: if it comes
    first its handler runs, and it is re-armed with its remaining time after.
    """
    if seconds is None or threading.current_thread() is not threading.main_thread():
        return fn(*args)
    outer_handler = signal.getsignal(signal.SIGALRM)
    outer_delay, outer_interval = signal.getitimer(signal.ITIMER_REAL)
    start = time.monotonic()
    outer_first = 0 < outer_delay <= seconds
    running = [False]

    def alarm(signum, frame):
        if outer_first:
            signal.signal(signal.SIGALRM, outer_handler)
            if callable(outer_handler):
                outer_handler(signum, frame)
        if running[0]:
            raise _TimeUp()

    signal.signal(signal.SIGALRM, alarm)
    try:
        signal.setitimer(
            signal.ITIMER_REAL,
            outer_delay if outer_first else max(float(seconds), 1e-3),
            0.0 if outer_first else REARM_INTERVAL,
        )
        running[0] = True
        try:
            return fn(*args)
        finally:
            running[0] = False
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, outer_handler)
        if outer_delay:
            signal.setitimer(
                signal.ITIMER_REAL,
                max(outer_delay - (time.monotonic() - start), 1e-3),
                outer_interval,
            )


def _ops(expr, cap=MAX_OPS):
    """
    sympy.count_ops of ``expr``, or ``cap + 1`` if the expression has more than ``cap`` nodes.

    count_ops walks the expression as a tree, which for a kinematic chain is exponentially larger
    than the shared graph in memory (7 joints and it would not return).
    """
    nodes = 0
    for _ in sympy.preorder_traversal(expr):
        nodes += 1
        if nodes > cap:
            return cap + 1
    return int(sympy.count_ops(expr))


def _entries(expr):
    if isinstance(expr, (list, tuple)):
        return list(expr)
    if (
        isinstance(expr, sympy.MatrixBase)
        or hasattr(expr, 'tolist')
        and not isinstance(expr, sympy.Basic)
    ):
        return sympy.flatten(expr.tolist())
    return [sympy.sympify(expr)]


def count_ops(expr, cap=MAX_OPS):
    """
    Operations in an expression, a matrix or a list of them (sympy.count_ops, summed).

    An entry of more than ``cap`` nodes counts as ``cap + 1`` (a lower bound, see _ops).
    """
    return sum(_ops(e, cap) for e in _entries(expr))


def _reduce_polynomial(expr):
    expr = sympy.expand(expr)
    squares = {
        sympy.sin(s.args[0]) ** 2: 1 - sympy.cos(s.args[0]) ** 2 for s in expr.atoms(sympy.sin)
    }
    return sympy.expand(expr.subs(squares)) if squares else expr


def reduce_trig(expr):
    """
    Return the canonical expanded form with no sin(x)**2 (replaced by 1 - cos(x)**2).

    A quotient (analytic Jacobians divide by cos(theta)) is put over one denominator first and its
    numerator and denominator reduced apart (expanding it whole multiplies the terms).
    """
    expr = sympy.sympify(expr)
    if any(p.exp.is_negative for p in expr.atoms(sympy.Pow)):
        numerator, denominator = sympy.fraction(sympy.together(expr))
        return _reduce_polynomial(numerator) / _reduce_polynomial(denominator)
    return _reduce_polynomial(expr)


@dataclass
class SimplifyReport:
    """
    What :func:`simplify` did.

    Operations before, after the reduction and at the end (each entry counted up to ``max_ops``:
    ``capped`` says a figure is a lower bound); seconds; entries (flat indices) left unreduced or
    uncompacted by a limit.
    """

    ops_before: int = 0
    ops_reduced: int = 0
    ops_after: int = 0
    seconds: float = 0.0
    not_reduced: list = field(default_factory=list)
    not_compacted: list = field(default_factory=list)
    capped: bool = False

    def __str__(self):
        limits = ''
        if self.not_reduced or self.not_compacted:
            limits = (
                f'; left by the limits: {len(self.not_reduced)} unreduced, '
                f'{len(self.not_compacted)} uncompacted entries'
            )
        at_least = '>= ' if self.capped else ''
        return (
            f'{at_least}{self.ops_before} -> {self.ops_reduced} (reduced) -> {self.ops_after} '
            f'operations in {self.seconds:.2f} s{limits}'
        )


def simplify_entry(expr, trig=True, limit=TIME_LIMIT, max_ops=MAX_OPS, report=None, index=0):
    """One expression simplified (see the module docstring); ``report`` collects the figures."""
    expr = sympy.sympify(expr)
    if not trig or not expr.free_symbols:
        return expr
    reduced = expr
    limited = _ops(expr, max_ops) > max_ops
    if not limited:
        try:
            reduced = call_with_time_limit(limit, reduce_trig, expr)
        except _TimeUp:
            limited = True
    if limited and report is not None:
        report.not_reduced.append(index)
    if report is not None:
        report.ops_reduced += _ops(reduced, max_ops)
    best, best_ops = reduced, _ops(reduced, max_ops)
    if _ops(expr, max_ops) < best_ops:  # (a quotient can come out of the reduction larger)
        best, best_ops = expr, _ops(expr, max_ops)
    if not best.has(sympy.sin, sympy.cos) or best_ops > max_ops:
        return best
    timed_out = False
    start = best
    for method in (sympy.fu, sympy.trigsimp):
        try:
            candidate = call_with_time_limit(limit, method, start)
        except _TimeUp:
            timed_out = True
            continue
        ops = _ops(candidate, max_ops)
        if ops < best_ops:
            best, best_ops = candidate, ops
    if timed_out and report is not None:
        report.not_compacted.append(index)
    return best


def simplify(expr, trig=True, limit=TIME_LIMIT, max_ops=MAX_OPS, total_limit=TOTAL_LIMIT):
    """
    (simplified, SimplifyReport) of an expression, a sympy Matrix / Array or a list.

    ``trig=False`` skips everything (the switch for large models: the result is returned as
    it is, with its size).  ``limit``: seconds per step and entry; ``max_ops``: larger entries
    are not expanded; ``total_limit``: seconds for the whole call, after which the remaining
    entries are returned as they are (None: no limit).
    """
    start = time.perf_counter()
    sizes = [_ops(e, max_ops) for e in _entries(expr)]
    report = SimplifyReport(ops_before=sum(sizes), capped=any(n > max_ops for n in sizes))
    deadline = None if total_limit is None else start + total_limit

    def one(e, k):
        if deadline is not None and time.perf_counter() > deadline:
            report.not_reduced.append(k)
            report.ops_reduced += _ops(e, max_ops)
            return sympy.sympify(e)
        step = limit if deadline is None else max(1e-3, min(limit, deadline - time.perf_counter()))
        return simplify_entry(e, trig, step, max_ops, report, k)

    if isinstance(expr, (sympy.MatrixBase, sympy.NDimArray)):
        flat = [one(e, k) for k, e in enumerate(sympy.flatten(expr.tolist()))]
        out = (
            type(expr)(flat).reshape(*expr.shape)
            if isinstance(expr, sympy.NDimArray)
            else sympy.Matrix(expr.rows, expr.cols, flat)
        )
    elif isinstance(expr, (list, tuple)):
        out = [one(e, k) for k, e in enumerate(expr)]
    else:
        out = one(expr, 0)
    if not trig:
        report.ops_reduced = report.ops_before
    report.ops_after = count_ops(out, max_ops)
    report.seconds = time.perf_counter() - start
    return out, report


def cse(expr, symbol_prefix='x'):
    """
    Return (replacements, reduced, operations): sympy.cse of a matrix, array, list or expression.

    ``operations`` counts the replacements and the reduced expressions (the cost of evaluating them
    once each).
    """
    items = (
        sympy.flatten(expr.tolist())
        if hasattr(expr, 'tolist') and not isinstance(expr, sympy.Basic)
        else list(expr)
        if isinstance(expr, (list, tuple))
        else [expr]
    )
    replacements, reduced = sympy.cse(items, symbols=sympy.numbered_symbols(symbol_prefix))
    ops = sum(_ops(v) for _, v in replacements) + sum(_ops(e) for e in reduced)
    return replacements, reduced, ops
