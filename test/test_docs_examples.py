"""
Every code block of README.md and of the documentation pages runs, and prints what they show.

How a block is treated is said in test/docs_examples.py (python and bash run, yaml and xml are
parsed, a ``text`` block right after one is its output; a block that cannot run here is marked
``<!-- not run: why -->``).  One test per page: its Python blocks run in one process, in order
(a fork of a process that imported numpy and spart_ros once for all the pages).
"""

import doctest
import json
import os
from pathlib import Path
import signal
import socket
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET

from docs_examples import blocks, problems
import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted(
    [ROOT / 'README.md']
    + [
        p
        for p in (ROOT / 'docs').rglob('*.md')
        if not {'_generated', '_build'} & set(p.relative_to(ROOT / 'docs').parts)
    ]
)
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE

SERVER = textwrap.dedent(
    """
    import contextlib, io, json, os, select, socket, sys, traceback

    # what (nearly) every page imports first, imported once here: each page's session is a fork
    # of this process, so that no page pays for an interpreter's start and these imports again
    import numpy
    import spart_ros.sim.closed_loop  # spart_ros.core, .control, .sim


    def session(connection):
        stream = connection.makefile('rw', encoding='utf-8')
        stream.write(f'{os.getpid()}\\n')
        stream.flush()
        scope = {'__name__': '__main__'}
        for line in stream:
            out = io.StringIO()
            error = None
            try:
                with contextlib.redirect_stdout(out):
                    exec(compile(json.loads(line), '<doc block>', 'exec'), scope)
            except BaseException:
                error = traceback.format_exc()
            stream.write(json.dumps([out.getvalue(), error]) + '\\n')
            stream.flush()


    server = socket.socket(socket.AF_UNIX)
    server.bind(sys.argv.pop())
    server.listen()
    print('ready', flush=True)
    os.dup2(2, 1)  # nobody reads that pipe any more: what a block writes to fd 1 goes to stderr
    while sys.stdin not in select.select([server, sys.stdin], [], [])[0]:  # stdin closed: the end
        connection, _ = server.accept()
        pid = os.fork()
        if pid == 0:  # the page's session, until the test hangs up
            server.close()
            session(connection)
            sys.stdout.flush()
            sys.stderr.flush()
            # no interpreter clean-up (the blocks' output is checked already): freeing each object
            # would first copy the memory page it shares with the server (50 ms of CPU per page)
            os._exit(0)
        connection.close()
        os.waitpid(pid, 0)  # one page at a time
    """
)


@pytest.fixture(scope='module')
def session_server(tmp_path_factory):
    """
    Return the address of the process whose forks run the pages' Python blocks.

    An interpreter with numpy and spart_ros imported, for the module: each page's blocks run in a
    fork of it (pages apart, as they were in a process each, without an interpreter's start and
    those imports per page: about 0.3 s of CPU each here).
    """
    address = str(tmp_path_factory.mktemp('docs_sessions') / 'server')
    server = subprocess.Popen(
        [sys.executable, '-c', SERVER, address],
        cwd=ROOT,
        env=dict(os.environ, MPLBACKEND='Agg'),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout.readline() == 'ready\n', 'the Python session server did not start'
        yield address
    finally:
        server.stdin.close()
        server.stdout.close()
        try:
            server.wait(timeout=60)
        finally:
            server.kill()


class PythonSession:
    """One page's Python session (a fork of the server): its blocks in order, in one namespace."""

    def __init__(self, address):
        self.connection = socket.socket(socket.AF_UNIX)
        self.connection.connect(address)
        self.stream = self.connection.makefile('rw', encoding='utf-8')
        self.pid = int(self.stream.readline())
        self.busy = False

    def run(self, code):
        """Return (printed text, traceback or None) of ``code``."""
        self.busy = True
        self.stream.write(json.dumps(code) + '\n')
        self.stream.flush()
        line = self.stream.readline()
        self.busy = False
        assert line, 'the Python session of the page died'
        return json.loads(line)

    def close(self):
        if self.busy:  # the test stopped in a block (a timeout): the next page's session waits
            os.kill(self.pid, signal.SIGKILL)
        self.stream.close()
        self.connection.close()


def _check_output(block, got):
    if block.output is None:
        return
    want = block.output.code
    assert doctest.OutputChecker().check_output(want, got, FLAGS), (
        f'{block}: printed\n{got}\nbut the page shows\n{want}'
    )


def _page_id(path):
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize('page', PAGES, ids=_page_id)
def test_the_code_blocks_of_the_page_run(page, session_server):
    found = blocks(_page_id(page), page.read_text(encoding='utf-8'))
    bad = [p for p in map(problems, found) if p]
    assert not bad, '\n'.join(bad)
    run = [b for b in found if b.not_run is None]
    env = dict(os.environ, MPLBACKEND='Agg')
    for b in run:
        if b.lang == 'yaml':
            yaml.safe_load(b.code)
        elif b.lang == 'xml':
            ET.fromstring(b.code)
    session = None
    try:
        for b in run:  # in page order: a bash block may write what a Python block reads
            if b.lang == 'python':
                session = session or PythonSession(session_server)
                out, error = session.run(b.code)
                assert error is None, f'{b} raised:\n{error}\n{b.code}'
                _check_output(b, out)
            elif b.lang == 'bash':
                done = subprocess.run(
                    ['bash', '-e', '-c', b.code],
                    cwd=ROOT,
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=600,
                )
                assert done.returncode == 0, (
                    f'{b} exited {done.returncode}:\n{done.stdout}\n{done.stderr}'
                )
                _check_output(b, done.stdout)
    finally:
        if session is not None:
            session.close()


def test_not_run_blocks_are_few():
    """
    Blocks not run say why, and stay few: at most a third of the code blocks.

    A page is read to be used: its blocks should run.  Those not run here are commands of a ROS
    2 install (ros2 launch, topic, param, service; Gazebo) and commands that other tests run
    (the README's two commands, the documentation build, the ResolvedMotion example).
    """
    found = [b for page in PAGES for b in blocks(_page_id(page), page.read_text('utf-8'))]
    skipped = [b for b in found if b.not_run is not None]
    code = [b for b in found if b.lang != 'text' and not b.lang.startswith('{')]
    assert len(skipped) <= len(code) // 3, [f'{b}: {b.not_run}' for b in skipped]


def test_the_readme_picture_is_drawn_by_its_script(tmp_path):
    """scripts/docs_images.py draws the README's GIF (from the offline closed loop)."""
    from PIL import Image

    done = subprocess.run(
        [sys.executable, str(ROOT / 'scripts' / 'docs_images.py'), '--output', str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    with Image.open(tmp_path / 'SC_3DoF_motion.gif') as gif:
        assert gif.n_frames > 60 and gif.size == (320, 240)
    assert 'docs/images/SC_3DoF_motion.gif' in (ROOT / 'README.md').read_text()


def test_the_readme_is_short():
    """README.md is for users: what it is, two commands, a tour, where to read on (<= 320)."""
    lines = (ROOT / 'README.md').read_text(encoding='utf-8').splitlines()
    assert len(lines) <= 320, f'README.md has {len(lines)} lines: move details into docs/'
    text = '\n'.join(lines)
    assert 'bash scripts/run_demo.sh' in text and 'bash scripts/test.sh' in text


#: a run of this many lines that comes twice in a page is a copy (issue 34: a how-to page held
#: its first 40 lines twice, and the site's menu listed it twice)
REPEAT = 10


def test_no_page_repeats_a_block_of_lines_or_has_two_titles():
    """
    No page holds the same REPEAT consecutive non-blank lines twice, nor a second '# ' title.

    Compared stripped; fences and lines of punctuation only (a table rule) do not count, and a
    '# ' inside a code block is a comment, not a title.
    """
    found = []
    for page in PAGES:
        lines, titles, fenced = [], [], False
        for k, raw in enumerate(page.read_text('utf-8').splitlines(), 1):
            line = raw.strip()
            if line.startswith(('```', '~~~')):
                fenced = not fenced
                continue
            if not fenced and raw.startswith('# '):
                titles.append(k)
            if line and any(c.isalnum() for c in line):
                lines.append((k, line))
        first = {}
        for i in range(len(lines) - REPEAT + 1):
            window = tuple(text for _, text in lines[i : i + REPEAT])
            if window in first and lines[first[window] + REPEAT - 1][0] < lines[i][0]:
                found.append(
                    f'{page.relative_to(ROOT)}: lines {lines[i][0]}.. repeat lines '
                    f'{lines[first[window]][0]}..'
                )
                break
            first.setdefault(window, i)
        if len(titles) > 1:
            found.append(f'{page.relative_to(ROOT)}: {len(titles)} titles (lines {titles})')
    assert not found, found
