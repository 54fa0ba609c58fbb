"""
The public Python API of spart_ros, found by walking its packages.

Used by the site's build (:mod:`spart_docs` writes one reference page per package from it) and
by test/test_docstrings.py (every public function and class documents its parameters and what
it returns).  Public: a module whose name has no leading underscore; in it, the names of its
``__all__`` (else its names without a leading underscore) that it defines itself (re-exports are
documented where they are defined).
"""

import ast
import importlib
import inspect
import pkgutil
import re
import textwrap

#: the packages of the Python reference, in the order of its pages
PACKAGES = (
    'spart_ros.core',
    'spart_ros.control',
    'spart_ros.sim',
    'spart_ros.campaign',
    'spart_ros.codegen',
    'spart_ros.symbolic',
    'spart_ros.tools',
)
#: the packages whose every public function and class must document its parameters and returns
CHECKED = (
    'spart_ros.core',
    'spart_ros.control',
    'spart_ros.sim',
    'spart_ros.campaign',
    'spart_ros.codegen',
)


def modules(package):
    """Return the names of ``package`` and its public modules, depth first, sorted."""
    pkg = importlib.import_module(package)
    out = [package]
    if not hasattr(pkg, '__path__'):
        return out
    for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name):
        if info.name.startswith('_'):
            continue
        name = f'{package}.{info.name}'
        out += modules(name) if info.ispkg else [name]
    return out


def public_names(module):
    """
    Return the public names ``module`` defines (in ``__all__`` order, else source order).

    ``module``: a module object.  A name is public when ``__all__`` lists it (or, without
    ``__all__``, when it has no leading underscore and is a function or class), and defined here:
    a function or class whose ``__module__`` is this module, or data (any other object) that
    ``__all__`` lists and that no other spart_ros module defines.
    """
    names = getattr(module, '__all__', None)
    explicit = names is not None
    if names is None:
        names = [n for n in vars(module) if not n.startswith('_')]
    out = []
    for name in names:
        obj = getattr(module, name, None)
        if inspect.ismodule(obj):
            continue
        if inspect.isfunction(obj) or inspect.isclass(obj):
            if getattr(obj, '__module__', None) == module.__name__:
                out.append(name)
        elif explicit and _defined_here(module, name):
            out.append(name)
    return out


def _defined_here(module, name):
    """Return whether ``module``'s source assigns ``name`` at its top level."""
    try:
        tree = ast.parse(inspect.getsource(module))
    except (OSError, TypeError):
        return False
    for node in tree.body:
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign):
            targets = [node.target]
        for t in targets:
            for n in ast.walk(t):
                if isinstance(n, ast.Name) and n.id == name:
                    return True
    return False


# -- what 'documented' means (test/test_docstrings.py) ---------------------------------------


def _words(doc):
    return set(re.findall(r'[A-Za-z_][A-Za-z0-9_]*', doc or ''))


def _returns_value(func):
    """Return whether ``func``'s own body returns a value (a ``return x`` not None) or yields."""
    try:
        source = textwrap.dedent(inspect.getsource(func))
        tree = ast.parse(source)
    except (OSError, TypeError, SyntaxError):
        return False
    top = tree.body[0]

    def walk(node):
        for child in ast.iter_child_nodes(node):
            if isinstance(
                child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
            ):
                continue
            if isinstance(child, (ast.Yield, ast.YieldFrom)):
                return True
            if isinstance(child, ast.Return) and child.value is not None:
                if not (isinstance(child.value, ast.Constant) and child.value.value is None):
                    return True
            if walk(child):
                return True
        return False

    return walk(top)


RETURN_WORDS = re.compile(r'\b(return|returns|returned|yield|yields)\b', re.IGNORECASE)


def parameters(func):
    """Return the names of ``func``'s parameters a caller gives (not self/cls, not _private)."""
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return []
    out = []
    for k, p in enumerate(sig.parameters.values()):
        if k == 0 and p.name in ('self', 'cls'):
            continue
        if p.name.startswith('_'):
            continue
        out.append(p.name)
    return out


def _glossary():
    from spart_ros.core.arguments import ARGUMENTS

    return ARGUMENTS


#: classes whose constructor parameters are documented elsewhere, and where (test_docstrings.py
#: checks each claim: the names must be those of the table it names)
DOCUMENTED_ELSEWHERE = {
    'spart_ros.control.settings.ControllerSettings': 'spart_controller',
}


def missing(obj, doc=None):
    """
    Return what the docstring of the function ``obj`` lacks (a list of phrases; empty: none).

    ``doc``: the text to search (default the function's docstring).  Documented: a docstring;
    every parameter named in it (or one of SPART's standard argument names,
    :data:`spart_ros.core.arguments.ARGUMENTS`, which the reference describes once); a function
    that returns a value says what (a word 'return(s)' or 'yield(s)': ament's pep257 summaries
    begin 'Return the ...').
    """
    doc = inspect.getdoc(obj) if doc is None else doc
    if not doc:
        return ['a docstring']
    out = []
    words = _words(doc)
    glossary = _glossary()
    absent = [p for p in parameters(obj) if p not in words and p not in glossary]
    if absent:
        out.append('parameter' + ('s ' if len(absent) > 1 else ' ') + ', '.join(absent))
    if _returns_value(obj) and not RETURN_WORDS.search(doc):
        out.append('what it returns')
    return out


def undocumented(package):
    """
    Return [(qualified name, [what is missing])] for every public function and class of package.

    A class: its docstring (or its ``__init__``'s) names each constructor parameter; each of its
    public methods (defined in the class, not properties) is checked as a function, except an
    override without a docstring of a base class's documented method (the base's docstring
    documents it: the reference shows it, ``autodoc_inherit_docstrings``).
    """
    out = []
    for modname in modules(package):
        module = importlib.import_module(modname)
        for name in public_names(module):
            obj = getattr(module, name)
            qual = f'{modname}.{name}'
            if inspect.isfunction(obj):
                gaps = missing(obj)
                if gaps:
                    out.append((qual, gaps))
            elif inspect.isclass(obj):
                out += _class_gaps(qual, obj, qual in DOCUMENTED_ELSEWHERE)
    return out


def _documented_in_a_base(cls, name):
    """Return whether a base class of ``cls`` defines method ``name`` with a docstring."""
    for base in cls.__mro__[1:]:
        func = getattr(base.__dict__.get(name), '__func__', base.__dict__.get(name))
        if func is not None and getattr(func, '__doc__', None):
            return True
    return False


def _class_gaps(qual, cls, elsewhere=False):
    out = []
    doc = inspect.getdoc(cls) or ''
    init = cls.__dict__.get('__init__')
    if elsewhere:
        gaps = [] if doc else ['a docstring']
    elif inspect.isfunction(init):
        gaps = missing(init, doc + '\n' + (init.__doc__ or '') if (doc or init.__doc__) else '')
        gaps = [g for g in gaps if g != 'what it returns']
    else:
        gaps = [] if doc else ['a docstring']
    if gaps:
        out.append((qual, gaps))
    for name, member in vars(cls).items():
        if name.startswith('_'):
            continue
        func = member.__func__ if isinstance(member, (staticmethod, classmethod)) else member
        if inspect.isfunction(func):
            if not func.__doc__ and _documented_in_a_base(cls, name):
                continue  # an override of a documented method: the base's docstring is its own
            gaps = missing(func)
            if gaps:
                out.append((f'{qual}.{name}', gaps))
    return out
