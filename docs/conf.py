"""
Sphinx configuration of the spart_ros documentation site.

Build it with ``rosdoc2 build --package-path .`` (the ROS tool; it wraps this file) or
directly: ``sphinx-build -W -b html docs docs/_build/html`` (from the repository root, with the
environment sourced: ``source scripts/env.sh``).  The reference pages (Python API, node
parameters, topics, services, messages) and the figures are generated from the code when the
build starts (``_ext/spart_docs.py``), into ``_generated/`` of the source folder.
"""

import os
from pathlib import Path
import re
import sys


def _root():
    """Return the repository root (the folder of spart_ros' package.xml)."""
    # rosdoc2 runs a copy of this folder and exec()s this file from its own conf.py (so
    # __file__ is that one's): its text names this file's path, exec(open("<path>").read())
    here = Path(globals().get('__file__', 'conf.py')).resolve()
    candidates = [here.parent.parent]
    try:
        named = re.search(r'exec\(open\("([^"]+)"\)', here.read_text(encoding='utf-8'))
    except OSError:
        named = None
    if named:
        candidates.append(Path(named.group(1)).resolve().parent.parent)
    for folder in (*candidates, Path.cwd(), *Path.cwd().parents):
        xml = folder / 'package.xml'
        if xml.is_file() and '<name>spart_ros</name>' in xml.read_text(encoding='utf-8'):
            return folder
    raise RuntimeError('conf.py: cannot find the spart_ros repository (package.xml)')


ROOT = _root()
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / 'docs' / '_ext'))
os.environ.setdefault('SPART_DOCS_ROOT', str(ROOT))

project = 'spart_ros'
author = 'spart_ros maintainers'
copyright = 'the spart_ros maintainers; licence Apache-2.0'  # noqa: A001 - Sphinx's name
scope = {}
exec((ROOT / 'spart_ros' / '__init__.py').read_text(encoding='utf-8'), scope)
release = scope['__version__']
version = '.'.join(release.split('.')[:2])

extensions = [
    'sphinx.ext.autodoc',
    'sphinx.ext.mathjax',
    'myst_parser',
    'sphinx_rtd_theme',
    'spart_docs',
]
source_suffix = {'.rst': 'restructuredtext', '.md': 'markdown'}
root_doc = 'index'
exclude_patterns = ['_build', 'README.md', '*/README.md', '_generated/transitions.rst']  # included
templates_path = []

# -- autodoc: docstrings in ament's pep257 style (reST with ``literals``; no numpy/google
# sections, so no napoleon)
autodoc_member_order = 'bysource'
autodoc_default_options = {'show-inheritance': True}
autodoc_typehints = 'none'
autodoc_preserve_defaults = True
autodoc_inherit_docstrings = True  # an override shows its base's docstring
add_module_names = False
python_display_short_literal_types = True
# documented functions and classes are not entries of the pages' tables of contents: the sidebar
# (navigation_depth 3) stops above them, at Python API > package > module, yet every page's sidebar
# copied and pruned them (about 1000 entries: a fifth of the build's CPU time); same HTML without
toc_object_entries = False

# -- MyST: the docs/*.md pages stay plain GitHub Markdown
myst_enable_extensions = ['colon_fence', 'dollarmath']
myst_heading_anchors = 3
suppress_warnings = ['myst.header']

nitpicky = False

html_theme = 'sphinx_rtd_theme'
html_title = f'spart_ros {release}'
# collapse_navigation (the theme's default): each page's sidebar expands its own branch only; the
# whole tree on every page was 28 % of the build's CPU (21 -> 15 s here)
html_theme_options = {'navigation_depth': 3, 'collapse_navigation': True}
html_static_path = []
html_show_sourcelink = False

# rosdoc2 (when it wraps this file): keep this theme and do not add other packages' inventories
rosdoc2_settings = {
    'override_theme': False,
    'automatically_extend_intersphinx_mapping': False,
    'enable_intersphinx': False,
}
