"""
A small expression graph for code generation: scalar operations with hash-consing.

Every value an unrolled algorithm computes is a node of one :class:`Graph`: an input
(``q[2]``), a constant, or an operation (``+ - * /``, negation, ``sin cos sqrt``, ``atan2``) on
earlier nodes.  Building a node that already exists returns the existing one (hash-consing: common
subexpressions are shared by construction, the code generator emits each once), and
operations on constants fold (``0 * x`` is 0, ``1 * x`` is x, ``2 * 3`` is 6), so structural
zeros of the model (a joint axis along z, identity frames) cost nothing.

:class:`Var` wraps a node id with the arithmetic operators, so the algorithms in
:mod:`spart_ros.codegen.dynamics` read like numeric code on lists of scalars.  The graph
counts its nodes against ``max_operations`` and its build time against ``max_seconds`` and
raises :class:`CodegenLimitError` naming the limit, instead of growing without bound.
"""

import math
import time

from ..core.errors import SpartError

#: the API: the errors (the expression graph is the generator's machinery, not an API)
__all__ = [
    'CodegenError',
    'CodegenLimitError',
]

CONST, INPUT, ADD, SUB, MUL, DIV, NEG, SIN, COS, SQRT, ATAN2 = (
    'const',
    'in',
    '+',
    '-',
    '*',
    '/',
    'neg',
    'sin',
    'cos',
    'sqrt',
    'atan2',
)
FUNCTIONS = (SIN, COS, SQRT, ATAN2)
_FOLD = {
    ADD: lambda a, b: a + b,
    SUB: lambda a, b: a - b,
    MUL: lambda a, b: a * b,
    DIV: lambda a, b: a / b,
    NEG: lambda a: -a,
    SIN: math.sin,
    COS: math.cos,
    SQRT: math.sqrt,
    ATAN2: math.atan2,
}


class CodegenError(SpartError, ValueError):
    """A model or a request the code generator cannot serve (the message says why)."""


class CodegenLimitError(CodegenError):
    """Generation stopped at a size or time limit (the message names the limit and its value)."""


class Graph:
    """
    Nodes ``(op, a, b)`` in creation order, deduplicated.

    A node's arguments are earlier nodes; constants ``(CONST, value)``, inputs ``(INPUT, name,
    index)``.

    ``max_operations``: at most this many operation nodes (None: no limit); ``max_seconds``:
    building stops after this long (None: no limit).  Either raises CodegenLimitError, with
    ``what`` (e.g. "H of robot 'x'") in the message.
    """

    def __init__(self, max_operations=None, max_seconds=None, what='the model'):
        self.nodes = []
        self._index = {}
        self.max_operations = max_operations
        self.max_seconds = max_seconds
        self.what = what
        self._start = time.perf_counter()
        self.operations = 0
        self.checks = []  # (node id, message): values that must be > 0 (pivots)
        self.zero, self.one = self.const(0.0), self.const(1.0)

    # -- nodes ---------------------------------------------------------------------------
    def _node(self, key):
        i = self._index.get(key)
        if i is None:
            i = len(self.nodes)
            self.nodes.append(key)
            self._index[key] = i
            if key[0] not in (CONST, INPUT):
                self.operations += 1
                if self.max_operations is not None and self.operations > self.max_operations:
                    raise CodegenLimitError(
                        f'{self.what}: more than max_operations={self.max_operations} scalar '
                        'operations (the unrolled code would be too large to compile in '
                        'reasonable time); use spart_ros.core.fast.FastDynamics for this model, '
                        'or raise max_operations'
                    )
                if (
                    self.max_seconds is not None
                    and not self.operations & 1023
                    and time.perf_counter() - self._start > self.max_seconds
                ):
                    raise CodegenLimitError(
                        f'{self.what}: generation took more than max_seconds={self.max_seconds:g} '
                        f's ({self.operations} operations so far); use '
                        'spart_ros.core.fast.FastDynamics for this model, or raise max_seconds'
                    )
        return Var(self, i)

    def const(self, value):
        value = float(value)
        if value == 0.0:
            value = 0.0  # -0.0 and 0.0 are one node
        return self._node((CONST, value))

    def input_node(self, name, index):
        return self._node((INPUT, name, index))

    def inputs(self, name, n):
        return [self.input_node(name, k) for k in range(n)]

    def value(self, x):
        """
        Return the constant value of ``x`` (a Var or a number).

        Or None if it is not a constant.
        """
        if isinstance(x, Var):
            key = self.nodes[x.id]
            return key[1] if key[0] == CONST else None
        return float(x)

    def var(self, x):
        return x if isinstance(x, Var) else self.const(x)

    def require_positive(self, x, message):
        """Record that ``x`` must be > 0 at run time (the generated code checks it)."""
        if self.value(x) is not None:
            if not self.value(x) > 0:
                raise CodegenError(message)
            return
        self.checks.append((x.id, message))

    # -- operations with folding -------------------------------------------------------------
    def _op(self, op, *args):
        args = [self.var(a) for a in args]
        values = [self.value(a) for a in args]
        if all(v is not None for v in values):
            try:
                return self.const(_FOLD[op](*values))
            except (ZeroDivisionError, ValueError):
                raise CodegenError(
                    f'{self.what}: {op} of the constants {values} is undefined'
                ) from None
        fold = getattr(self, '_fold_' + _NAMES[op])(*args, *values)
        if fold is not None:
            return fold
        ids = [a.id for a in args]
        if op in (ADD, MUL) and ids[0] > ids[1]:
            ids.reverse()  # commutative: one node for a + b and b + a
        return self._node((op, *ids))

    def _neg_arg(self, a):
        key = self.nodes[a.id]
        return Var(self, key[1]) if key[0] == NEG else None

    def _fold_add(self, a, b, va, vb):
        if va == 0.0:
            return b
        if vb == 0.0:
            return a
        nb, na = self._neg_arg(b), self._neg_arg(a)
        if nb is not None:
            return self._op(SUB, a, nb)
        if na is not None:
            return self._op(SUB, b, na)
        return None

    def _fold_sub(self, a, b, va, vb):
        if vb == 0.0:
            return a
        if va == 0.0:
            return self._op(NEG, b)
        if a.id == b.id:
            return self.zero
        nb = self._neg_arg(b)
        if nb is not None:
            return self._op(ADD, a, nb)
        if vb is not None:
            return self._op(ADD, a, -vb)
        return None

    def _fold_mul(self, a, b, va, vb):
        if va is not None:
            a, b, va, vb = b, a, vb, va  # the constant second
        if vb is not None:
            if vb == 0.0:
                return self.zero
            if vb == 1.0:
                return a
            if vb == -1.0:
                return self._op(NEG, a)
        na, nb = self._neg_arg(a), self._neg_arg(b)
        if (
            na is not None or nb is not None
        ):  # pull signs out: -x * y is -(x * y), -x * -y is x * y
            product = self._op(MUL, a if na is None else na, b if nb is None else nb)
            return product if na is not None and nb is not None else self._op(NEG, product)
        if vb is not None:  # constants first in the node (c * x)
            return self._node((MUL, *sorted((a.id, b.id))))
        return None

    def _fold_div(self, a, b, va, vb):
        if va == 0.0:
            return self.zero
        if vb is not None:
            if vb == 0.0:
                raise CodegenError(f'{self.what}: division by the constant 0')
            return self._op(MUL, a, 1.0 / vb)
        return None

    def _fold_neg(self, a, va):
        key = self.nodes[a.id]
        if key[0] == NEG:
            return Var(self, key[1])
        if key[0] == SUB:
            return self._op(SUB, Var(self, key[2]), Var(self, key[1]))
        return None

    def _fold_fn(self, a, va):
        return None

    def _fold_atan2(self, y, x, vy, vx):
        return None

    _fold_sin = _fold_cos = _fold_sqrt = _fold_fn

    # -- analysis ------------------------------------------------------------------------------
    def reachable(self, roots):
        """Ids of the nodes the ``roots`` (node ids) depend on, in creation order."""
        seen = set()
        stack = list(roots)
        while stack:
            i = stack.pop()
            if i in seen:
                continue
            seen.add(i)
            key = self.nodes[i]
            if key[0] not in (CONST, INPUT):
                stack.extend(key[1:])
        return sorted(seen)

    def operation_count(self, roots):
        """Operations needed to compute ``roots`` with sharing (each node once)."""
        return sum(1 for i in self.reachable(roots) if self.nodes[i][0] not in (CONST, INPUT))

    def tree_size(self, roots):
        """
        Operations needed WITHOUT sharing.

        The size of the expressions written out as trees (what a symbolic expression of the same
        computation holds before common subexpression elimination). An exact integer, however
        large.
        """
        size = {}
        for i in self.reachable(roots):
            key = self.nodes[i]
            size[i] = 0 if key[0] in (CONST, INPUT) else 1 + sum(size[j] for j in key[1:])
        return sum(size[i] for i in roots)


_NAMES = {
    ADD: 'add',
    SUB: 'sub',
    MUL: 'mul',
    DIV: 'div',
    NEG: 'neg',
    SIN: 'sin',
    COS: 'cos',
    SQRT: 'sqrt',
    ATAN2: 'atan2',
}


class Var:
    """A node of a :class:`Graph` with arithmetic operators (numbers mix in as constants)."""

    __slots__ = ('graph', 'id')

    def __init__(self, graph, i):
        self.graph, self.id = graph, i

    def __add__(self, o):
        return self.graph._op(ADD, self, o)

    def __radd__(self, o):
        return self.graph._op(ADD, o, self)

    def __sub__(self, o):
        return self.graph._op(SUB, self, o)

    def __rsub__(self, o):
        return self.graph._op(SUB, o, self)

    def __mul__(self, o):
        return self.graph._op(MUL, self, o)

    def __rmul__(self, o):
        return self.graph._op(MUL, o, self)

    def __truediv__(self, o):
        return self.graph._op(DIV, self, o)

    def __rtruediv__(self, o):
        return self.graph._op(DIV, o, self)

    def __neg__(self):
        return self.graph._op(NEG, self)

    def __repr__(self):
        return f'<Var {self.id} {self.graph.nodes[self.id]}>'


def sin(x):
    return x.graph._op(SIN, x)


def cos(x):
    return x.graph._op(COS, x)


def sqrt(x):
    return x.graph._op(SQRT, x)


def atan2(y, x):
    graph = y.graph if isinstance(y, Var) else x.graph
    return graph._op(ATAN2, y, x)


# --- small linear algebra on lists (3-vectors, 3x3 matrices as lists of rows) ----------------


def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def cross(a, b):
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def add(a, b):
    return [x + y for x, y in zip(a, b)]


def sub(a, b):
    return [x - y for x, y in zip(a, b)]


def scale(s, a):
    return [s * x for x in a]


def matvec(M, v):
    return [M[r][0] * v[0] + M[r][1] * v[1] + M[r][2] * v[2] for r in range(3)]


def matmul(A, B):
    return [
        [A[r][0] * B[0][c] + A[r][1] * B[1][c] + A[r][2] * B[2][c] for c in range(3)]
        for r in range(3)
    ]


def transpose(A):
    return [[A[c][r] for c in range(3)] for r in range(3)]


def evaluate(graph, inputs, roots):
    """
    Values (floats) of the nodes ``roots`` for ``inputs`` {name: sequence}.

    An interpreter of the graph, for checks.
    """
    values = {}
    for i in graph.reachable(roots):
        key = graph.nodes[i]
        if key[0] == CONST:
            values[i] = key[1]
        elif key[0] == INPUT:
            values[i] = float(inputs[key[1]][key[2]])
        else:
            values[i] = _FOLD[key[0]](*(values[j] for j in key[1:]))
    return [values[i] for i in roots]
