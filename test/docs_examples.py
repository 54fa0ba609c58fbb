"""
The code blocks of README.md and the documentation pages, found and run (test_docs_examples.py).

A fenced block's language says what is done with it:

- ``python``: run; the blocks of one page run in order in one Python process (one namespace, as
  a reader types them in one session), from the repository root;
- ``bash``: run with ``bash -e`` from the repository root, in the test's environment;
- ``yaml``: parsed; ``xml``: parsed; ``{directive}``: MyST's (a figure, an included table),
  the site's, not code;
- ``text`` right after a block (blank lines between at most): that block's printed output,
  compared as doctest compares (``...`` stands for any text; runs of white space are equal);
  elsewhere a ``text`` block is a picture in characters, not checked.

A block that cannot run here (a ROS 2 install's ``ros2 launch``, a command that runs until
stopped) says so in an HTML comment on the line before it, invisible on GitHub and in the site:
``<!-- not run: the reason -->``.  A block of another language, or none, without that comment
is an error: nothing in the docs goes unchecked by accident.
"""

import re

FENCE = re.compile(r'^(`{3,}|~{3,})\s*([^`\s]*)\s*(.*)$')
NOT_RUN = re.compile(r'<!--\s*not run:\s*(.+?)\s*-->')
RUN = ('python', 'bash')
PARSED = ('yaml', 'xml')


class Block:
    """One fenced block: its page, first line, language, text, and why it is not run."""

    def __init__(self, path, line, lang, code, not_run):
        self.path, self.line, self.lang, self.code, self.not_run = path, line, lang, code, not_run
        self.output = None  # the text block that follows it, if any

    def __repr__(self):
        return f'{self.path}:{self.line} ({self.lang or "no language"})'


def blocks(path, text):
    """Return the fenced blocks of the Markdown ``text`` (page ``path``), outputs attached."""
    lines = text.splitlines()
    out, k, last_end = [], 0, None
    while k < len(lines):
        m = FENCE.match(lines[k])
        if not m:
            k += 1
            continue
        fence, lang = m.group(1), m.group(2).lower()
        before = [ln for ln in lines[max(0, k - 2) : k] if ln.strip()]
        note = NOT_RUN.search(before[-1]) if before else None
        end = k + 1
        while end < len(lines) and not lines[end].startswith(fence):
            end += 1
        block = Block(str(path), k + 1, lang, '\n'.join(lines[k + 1 : end]) + '\n', None)
        block.not_run = note.group(1) if note else None
        follows = last_end is not None and all(not ln.strip() for ln in lines[last_end + 1 : k])
        if lang == 'text' and follows and out and out[-1].lang != 'text':
            out[-1].output = block
        else:
            out.append(block)
        last_end = end
        k = end + 1
    return out


def problems(block):
    """Return why ``block`` cannot be checked as it is ('' when it can)."""
    if block.not_run is not None or block.lang.startswith('{'):  # {...}: a directive of the site
        return ''
    if block.lang in RUN or block.lang in PARSED or block.lang == 'text':
        return ''
    return (
        f'{block}: a block of language {block.lang!r} is neither run nor parsed: give it one of '
        f'{RUN + PARSED + ("text",)}, or say why it is not run on the line before it '
        '(<!-- not run: ... -->)'
    )
