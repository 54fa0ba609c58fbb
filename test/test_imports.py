"""
The package's import structure: no import circle anywhere in spart_ros, and none hidden.

The graph is built from the source with ``ast`` (nothing is imported): one node per module, an
edge for every ``import``/``from ... import`` of a spart_ros module, wherever it is written
(module level, inside ``if``/``try``, inside a function), plus the packages whose ``__init__``
such an import runs first (importing ``spart_ros.core.fast.mimic`` from ``spart_ros.nodes``
runs ``spart_ros.core`` and ``spart_ros.core.fast``).  The graph must be acyclic, and the core
(``spart_ros.core``, ``spart_ros.native``) has no import of a spart_ros module inside a
function: such an import is how a circle gets hidden (it only runs later, when both modules are
loaded).
"""

import ast
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = 'spart_ros'
CORE = ('spart_ros.core', 'spart_ros.native')


def _modules():
    """Return {module name: (path, is_package)} for every .py file of the package."""
    out = {}
    for folder, dirs, files in os.walk(os.path.join(ROOT, PACKAGE)):
        dirs[:] = [d for d in dirs if d != '__pycache__']
        rel = os.path.relpath(folder, ROOT).replace(os.sep, '.')
        for f in files:
            if f.endswith('.py'):
                package = f == '__init__.py'
                out[rel if package else f'{rel}.{f[:-3]}'] = (os.path.join(folder, f), package)
    return out


MODULES = _modules()


def _ancestors(name):
    parts = name.split('.')
    return ['.'.join(parts[:k]) for k in range(1, len(parts))]


class _Imports(ast.NodeVisitor):
    """(target module, line, inside a function) of every spart_ros import in one module."""

    def __init__(self, name, package):
        self.name, self.package, self.depth, self.found = name, package, 0, []

    def visit_FunctionDef(self, node):
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_AsyncFunctionDef = visit_Lambda = visit_FunctionDef

    def _add(self, target, node):
        if target == PACKAGE or target.startswith(PACKAGE + '.'):
            self.found.append((target, node.lineno, self.depth > 0))

    def visit_Import(self, node):
        for alias in node.names:
            self._add(alias.name, node)

    def visit_ImportFrom(self, node):
        if node.level:
            base = self.name if self.package else self.name.rpartition('.')[0]
            for _ in range(node.level - 1):
                base = base.rpartition('.')[0]
            base = f'{base}.{node.module}' if node.module else base
        else:
            base = node.module
        for alias in node.names:
            sub = f'{base}.{alias.name}'
            self._add(sub if sub in MODULES else base, node)


def _imports(name):
    path, package = MODULES[name]
    with open(path, encoding='utf-8') as f:
        tree = ast.parse(f.read(), path)
    visitor = _Imports(name, package)
    visitor.visit(tree)
    return visitor.found


IMPORTS = {name: _imports(name) for name in MODULES}


def _graph():
    """Return {module: {imported module or package run by the import}}."""
    graph = {}
    for name, found in IMPORTS.items():
        edges = graph.setdefault(name, set())
        mine = set(_ancestors(name)) | {name}
        for target, _, _ in found:
            if target not in MODULES:
                continue
            edges.add(target)
            edges.update(a for a in _ancestors(target) if a not in mine and a in MODULES)
        edges.discard(name)
    return graph


def _cycle(graph):
    """One import circle as a list of modules (first == last), or None."""
    state, stack = {}, []

    def visit(node):
        state[node] = 'open'
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 'open':
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 'done'
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_import_graph_covers_the_package():
    """The graph sees the package (a guard for this test itself)."""
    graph = _graph()
    assert {
        'spart_ros.core.model',
        'spart_ros.core.fast',
        'spart_ros.native.kernels',
        'spart_ros.nodes.dynamics_node',
        'spart_ros.control.space_modes',
    } <= set(graph)
    assert 'spart_ros.core.checks' in graph['spart_ros.core.model']
    # an import of a submodule runs the packages above it that the importer is not inside
    assert 'spart_ros.core' in graph['spart_ros.nodes.model']


def test_no_import_circle_in_spart_ros():
    circle = _cycle(_graph())
    assert circle is None, 'import circle: ' + ' -> '.join(circle)


def test_the_cycle_finder_finds_circles():
    assert _cycle({'a': {'b'}, 'b': {'c'}, 'c': {'a'}}) == ['a', 'b', 'c', 'a']
    assert _cycle({'a': {'b', 'c'}, 'b': {'c'}, 'c': set()}) is None


@pytest.mark.parametrize('name', sorted(n for n in MODULES if n.startswith(CORE)))
def test_no_function_level_import_in_the_core(name):
    inside = [
        f'line {line}: {target}' for target, line, in_function in IMPORTS[name] if in_function
    ]
    assert not inside, (
        f'{name} imports spart_ros modules inside functions (import them at the top): {inside}'
    )


def test_the_layers():
    """
    Core never imports control, nodes, sim or tools; control never imports nodes.

    The compiled kernels (native) import nothing of spart_ros but themselves.
    """
    graph = _graph()
    rules = {
        'spart_ros.core': (
            'spart_ros.control',
            'spart_ros.nodes',
            'spart_ros.sim',
            'spart_ros.tools',
        ),
        'spart_ros.control': ('spart_ros.nodes', 'spart_ros.sim'),
        'spart_ros.native': (
            'spart_ros.core',
            'spart_ros.control',
            'spart_ros.nodes',
            'spart_ros.sim',
        ),
    }
    wrong = [
        f'{name} -> {target}'
        for name, targets in graph.items()
        for layer, banned in rules.items()
        if name == layer or name.startswith(layer + '.')
        for target in targets
        if any(target == b or target.startswith(b + '.') for b in banned)
    ]
    assert not wrong, wrong


# --- what a node's start pays for
# ------------------------------------------------------------------ packages no node module may
# import: symbolic and plotting stacks, the JIT compiler (the kernels
#: are built ahead of time), test oracles; MuJoCo and xacro only when a model needs them
HEAVY = (
    'sympy',
    'matplotlib',
    'numba',
    'llvmlite',
    'scipy',
    'pinocchio',
    'mujoco',
    'xacro',
    'mcap',
    'pandas',
)


def _console_scripts():
    with open(os.path.join(ROOT, 'setup.py'), encoding='utf-8') as f:
        tree = ast.parse(f.read())
    scripts = [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and ' = spart_ros.' in node.value
    ]
    return sorted({s.split('=')[1].strip().split(':')[0] for s in scripts})


def test_console_scripts_found():
    assert {
        'spart_ros.nodes.dynamics_node',
        'spart_ros.nodes.controller_node',
        'spart_ros.nodes.sim_node',
    } <= set(_console_scripts())


@pytest.mark.parametrize('module', _console_scripts() + ['spart_ros.nodes.bag_recorder'])
def test_a_node_module_imports_no_heavy_package(module):
    """
    Importing a node's module.

    What its process does before anything else) loads no symbolic, plotting or compiler package (a
    regression guard of the start-up time, not a timed test.
    """
    import json
    import subprocess
    import sys

    code = (
        f'import sys, json\nimport {module}\n'
        f'print(json.dumps(sorted({{m.split(".")[0] for m in sys.modules}} & set({HEAVY!r}))))'
    )
    out = subprocess.run(
        [sys.executable, '-c', code], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.strip().splitlines()[-1]) == [], (
        f'{module} imports {out.stdout.strip()}'
    )
