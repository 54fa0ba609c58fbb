"""
Build the compiled kernels ahead of time into one extension module.

    python -m spart_ros.native.build [--output DIR] [--force]

compiles every kernel of :data:`.exports.EXPORTS` from :mod:`.kernels` with numba's
ahead-of-time compiler (``numba.pycc``) into ``DIR/<library_name()>.<ext>`` (default: this
package's folder), without numba's runtime (nothing in it allocates) and for this machine's
CPU, and ``_call.c`` (the type-checked fast call of a kernel) into
``DIR/<library_name()>_call.<ext>``.  The module needs only NumPy to load (about a millisecond: no
numba, no LLVM), which is
what makes a node start fast.  Nothing is done when that file exists already (another build
with the same sources, Python, NumPy and CPU); concurrent builds of one folder wait for each
other.  Needs numba, a C compiler and Python's headers; :mod:`.compiled` runs this on first use
when no build is found.

``numba.pycc`` is pending deprecation in numba (since 0.57), to be removed once its replacement
exists; there is no other supported ahead-of-time path yet.  numba is pinned
(requirements.txt), only that notice is silenced here, and a numba without ``numba.pycc`` is
refused naming the plan (DEVELOPERS.md, "The compiled kernels and numba.pycc").
"""

import argparse
import contextlib
import fcntl
import glob
import importlib
from importlib.machinery import EXTENSION_SUFFIXES
import json
import os
import shutil
import sys
import tempfile
import time
import warnings

import numba
from numba.core.errors import NumbaPendingDeprecationWarning

with warnings.catch_warnings():
    warnings.simplefilter('ignore', NumbaPendingDeprecationWarning)  # pycc's notice (planned)
    try:
        from numba.pycc import CC
        from numba.pycc import compiler as pycc_compiler
        from numba.pycc.platform import Toolchain
    except ImportError as err:
        raise ImportError(
            f'numba {numba.__version__} has no numba.pycc ({err}): the compiled kernels are built '
            'with it; install the numba pinned in requirements.txt (DEVELOPERS.md, "The compiled '
            'kernels and numba.pycc": the plan for its replacement)'
        ) from None

from . import kernels
from .exports import EXPORTS, HERE, library_name, NOGIL


def _kernel(name):
    """Return the numba dispatcher of kernel ``name``: ``kernel`` or ``module.kernel`` here."""
    module, _, kernel = name.rpartition('.')
    source = importlib.import_module(f'{__package__}.{module}') if module else kernels
    return getattr(source, kernel)


@contextlib.contextmanager
def _releasing_the_gil(functions):
    """
    Compile ``functions`` (Python functions) with numba's release_gil flag.

    pycc compiles every export with one set of flags and offers no nogil option: its per-export
    compile call is wrapped while the module is built.
    """
    original = pycc_compiler.compile_extra

    def compile_extra(typingctx, targetctx, func, args, return_type, flags, **kwargs):
        if func in functions:
            flags = flags.copy()
            flags.release_gil = True
        return original(typingctx, targetctx, func, args, return_type, flags, **kwargs)

    pycc_compiler.compile_extra = compile_extra
    try:
        yield
    finally:
        pycc_compiler.compile_extra = original


def build(output=HERE, force=False, verbose=False):
    """
    Return the path of the built module in ``output``.

    Built now unless it exists, or ``force``.
    """
    name = library_name()
    target = os.path.join(output, name + EXTENSION_SUFFIXES[0])
    os.makedirs(output, exist_ok=True)
    with open(os.path.join(output, '.kernels.lock'), 'w') as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another process building the same folder: wait for it
        if os.path.exists(target) and not force:
            return target
        start = time.perf_counter()
        work = tempfile.mkdtemp(prefix='.build_', dir=output)  # same file system: an atomic rename
        try:
            cc = CC(name, source_module=kernels)
            cc.output_dir = work
            cc.use_nrt = False
            cc.target_cpu = 'host'
            cc.verbose = verbose
            nogil = set()
            for export, (kernel, _, types, returns) in EXPORTS.items():
                function = _kernel(kernel).py_func
                cc.export(export, f'{returns}({", ".join(types)})')(function)
                if export in NOGIL:
                    nogil.add(function)
            with warnings.catch_warnings(), _releasing_the_gil(nogil):
                # numba.pycc's pending-deprecation notice only: any other warning is shown
                warnings.simplefilter('ignore', NumbaPendingDeprecationWarning)
                cc.compile()
            seconds = time.perf_counter() - start
            with open(os.path.join(work, name + '.json'), 'w') as f:
                json.dump(
                    {
                        'module': name,
                        'numba': numba.__version__,
                        'nrt': cc.use_nrt,
                        'target_cpu': cc.target_cpu,
                        'seconds': round(seconds, 1),
                        'exports': sorted(EXPORTS),
                    },
                    f,
                    indent=1,
                )
            call = _build_call(name + '_call', work)
            os.replace(os.path.join(work, name + '.json'), os.path.join(output, name + '.json'))
            os.replace(call, os.path.join(output, name + '_call' + EXTENSION_SUFFIXES[0]))
            os.replace(os.path.join(work, cc.output_file), target)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        for old in glob.glob(os.path.join(output, '_kernels_*')):  # builds of older sources
            if not os.path.basename(old).startswith(name):
                try:
                    os.remove(old)
                except OSError:
                    pass
        return target


def _build_call(module, work):
    """_call.c compiled into the extension module ``module`` in ``work``; its path."""
    tools = Toolchain()
    objects = tools.compile_objects(
        [os.path.join(HERE, '_call.c')],
        work,
        include_dirs=tools.get_python_include_dirs(),
        macros=[('MODULE_NAME', module)],
        extra_cflags=['-O2'],
    )
    path = os.path.join(work, tools.get_ext_filename(module))
    tools.link_shared(
        path,
        objects,
        tools.get_python_libraries(),
        tools.get_python_library_dirs(),
        export_symbols=['PyInit_' + module],
    )
    return path


def main(argv=None):
    ap = argparse.ArgumentParser(
        description="Build spart_ros's compiled kernels (numba ahead-of-time)."
    )
    ap.add_argument(
        '--output', default=HERE, help='folder of the built module (default: this package)'
    )
    ap.add_argument(
        '--force', action='store_true', help='build even if a build of these sources exists'
    )
    ap.add_argument('--verbose', action='store_true', help="print the compiler's commands")
    args = ap.parse_args(argv)
    start = time.perf_counter()
    path = build(args.output, args.force, args.verbose)
    print(f'[native] compiled kernels ready in {time.perf_counter() - start:.1f} s: {path}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
