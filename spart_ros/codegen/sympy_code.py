"""
Code from closed forms: sympy expressions of the joint positions through the code generator.

:func:`generate_from_sympy` writes named sympy expressions (matrices, n-dimensional arrays or
scalars) of the joint symbols q as the functions of a Python module and of C files, with the
expression graph and the printers :func:`~spart_ros.codegen.generate` uses for a model's
algorithms: each expression is rebuilt node by node in a :class:`~.expressions.Graph` (hash-consed,
so what the expressions share is computed once; constants folded), then printed as straight-line
code.  The nodes: numbers (integers, rationals, floats, pi), the symbols q_i (``q[i]`` in the
code), sums, products, integer and half-integer powers, sin, cos, tan, atan, atan2, sqrt and Abs;
any other function, or a symbol that is not a joint symbol, is a CodegenError naming it.
"""

import time

from .expressions import atan2, CodegenError, cos, Graph, sin, sqrt
from .generator import Function, GeneratedCode, identifier, MAX_OPERATIONS, MAX_SECONDS

__all__ = ['generate_from_sympy']


def _power(base, k):
    """Return base**k for an integer k >= 1 (by squaring)."""
    out = None
    while k:
        if k & 1:
            out = base if out is None else out * base
        k >>= 1
        if k:
            base = base * base
    return out


class _Converter:
    """Rebuild sympy expressions in ``graph``; ``symbols``: {sympy symbol: graph input}."""

    def __init__(self, graph, symbols, what):
        import sympy

        self.sympy, self.graph, self.symbols, self.what = sympy, graph, symbols, what
        self.memo = {}

    def __call__(self, e):
        out = self.memo.get(e)
        if out is None:
            out = self.memo[e] = self._convert(e)
        return out

    def _convert(self, e):
        sp, g = self.sympy, self.graph
        if e.is_Symbol:
            if e not in self.symbols:
                raise CodegenError(
                    f'{self.what}: the symbol {e} is not a joint position (the code takes q only: '
                    'give every other parameter a number)'
                )
            return self.symbols[e]
        if e.is_Number or e.is_NumberSymbol:
            if not e.is_real or not e.is_finite:
                raise CodegenError(f'{self.what}: {e} is not a finite real number')
            return g.var(float(e))
        if e.is_Add:
            out = self(e.args[0])
            for a in e.args[1:]:
                out = out + self(a)
            return out
        if e.is_Mul:
            numerator, denominator = g.one, g.one
            for a in e.args:
                if a.is_Pow and a.exp.is_Number and a.exp < 0:
                    denominator = denominator * self(a.base ** (-a.exp))
                else:
                    numerator = numerator * self(a)
            return numerator / denominator
        if e.is_Pow:
            base, k = e.base, e.exp
            if k.is_Integer:
                k = int(k)
                if k == 0:
                    return g.one
                x = _power(self(base), abs(k))
                return x if k > 0 else 1.0 / x
            if k.is_Rational and k.q == 2:  # half-integer powers: sqrt
                x = _power(sqrt(self(base)), abs(int(k.p)))
                return x if k > 0 else 1.0 / x
            raise CodegenError(f'{self.what}: the power {e} is neither integer nor half-integer')
        if isinstance(e, sp.sin):
            return sin(self(e.args[0]))
        if isinstance(e, sp.cos):
            return cos(self(e.args[0]))
        if isinstance(e, sp.tan):
            x = self(e.args[0])
            return sin(x) / cos(x)
        if isinstance(e, sp.atan2):
            return atan2(self(e.args[0]), self(e.args[1]))
        if isinstance(e, sp.atan):  # sympy's atan2(y, x) with x > 0 known
            return atan2(self(e.args[0]), self.graph.one)
        if isinstance(e, sp.Abs):
            x = self(e.args[0])
            return sqrt(x * x)
        raise CodegenError(
            f'{self.what}: {type(e).__name__} ({str(e)[:80]}) has no code here (sums, products, '
            'powers, sin, cos, tan, atan, atan2, sqrt and Abs do)'
        )


def _function(name, expr, description, q, max_operations, max_seconds):
    """Return the generated :class:`~.generator.Function` ``name`` of the sympy ``expr``."""
    import sympy

    start = time.perf_counter()
    shape = tuple(expr.shape) if hasattr(expr, 'shape') else ()
    entries = list(sympy.flatten(expr.tolist())) if shape else [expr]
    if not shape:
        shape = (1,)
    elif shape[-1] == 1 and len(shape) == 2:  # a column is a vector
        shape = (shape[0],)
    graph = Graph(max_operations, max_seconds, what=name)
    symbols = {s: graph.input_node('q', i) for i, s in enumerate(q)}
    convert = _Converter(graph, symbols, name)
    values = [graph.var(convert(sympy.sympify(e))) for e in entries]
    f = Function(name, name, description, [('q', (len(q),))], 'out', shape, values, graph)
    f.operations = graph.operation_count(f.roots)
    f.tree_size = graph.tree_size(f.roots)
    f.seconds = time.perf_counter() - start
    return f


def generate_from_sympy(
    name,
    functions,
    q,
    language='python',
    *,
    doc=(),
    jit=True,
    max_operations=MAX_OPERATIONS,
    max_seconds=MAX_SECONDS,
):
    """
    Return the :class:`~.generator.GeneratedCode` of sympy expressions of the joint positions.

    ``name``: the module, file and C prefix (made an identifier); ``functions``: (function name,
    sympy expression, one-line description) triples, each a function ``name(q)`` returning the
    expression's array (row-major; a column as a vector, a scalar as 1 value); ``q``: the joint
    symbols, q[i] the code's ``q[i]``; ``language``: 'python', 'c' or 'all'; ``doc``: lines that
    open the files' header (what the expressions are, their conventions); ``jit``: the Python
    module compiles itself with numba when it is installed.  ``max_operations``,
    ``max_seconds``: per function, as in :func:`~spart_ros.codegen.generate`.  CodegenError names
    an expression without code (module docstring), a CodegenLimitError the limit it passed.
    """
    from .printers import c_files, expression_module

    if language not in ('python', 'c', 'all'):
        raise CodegenError(f"language: expected 'python', 'c' or 'all', got {language!r}")
    name = identifier(name)
    q = list(q)
    out = [
        _function(fname, expr, text, q, max_operations, max_seconds)
        for fname, expr, text in functions
    ]
    taken = [f.name for f in out]
    if len(set(taken)) != len(taken) or any(identifier(n) != n for n in taken):
        raise CodegenError(f'functions: expected distinct identifiers as names, got {taken}')
    joint_names = tuple(str(s) for s in q)
    lines = list(doc) + [
        '',
        f'Generated by spart_ros.codegen from sympy expressions of q = {list(joint_names)}.',
        'Do not edit: regenerate.  Arrays are row-major.  Functions (scalar operations after '
        'common-subexpression elimination; as trees without it):',
    ]
    lines += [
        f'- {f.name}(q): {f.description}, shape {f.shape}.  {f.operations} operations '
        f'({f.tree_size:.3g} as trees).'
        for f in out
    ]
    header = {'name': name, 'n_q': len(q), 'doc': lines, 'robot': None}
    files = {}
    if language in ('python', 'all'):
        module_doc = lines + [
            '',
            'Each function also exists as <name>_into(q, out), which writes into a preallocated '
            'float64 array.',
        ]
        files[f'{name}.py'] = expression_module(module_doc, out, joint_names, jit)
    if language in ('c', 'all'):
        files.update(c_files(header, out))
    return GeneratedCode(None, name, out, files, header)
