"""Using generated code from Python: import the module, compile and load the C library."""

import ctypes
import importlib.util
import os
import shutil
import subprocess
import sys

import numpy as np

from .expressions import CodegenError

#: the API
__all__ = [
    'find_c_compiler',
    'compile_c',
    'CLibrary',
    'load_c',
    'load_python',
]

C_FLAGS = ('-O2', '-shared', '-fPIC', '-std=c99')


def find_c_compiler():
    """Return the C compiler: $CC, else cc, gcc or clang on the PATH; None if there is none."""
    for candidate in (os.environ.get('CC'), 'cc', 'gcc', 'clang'):
        if candidate and shutil.which(candidate):
            return shutil.which(candidate)
    return None


def compile_c(c_file, library=None, compiler=None, flags=C_FLAGS):
    """
    Compile the generated ``c_file`` into a shared ``library`` (default ``lib<name>.so`` by it).

    ``compiler``: the C compiler (default: the first of cc, gcc, clang found); ``flags``: its
    options.

    Returns its path. CodegenError if no compiler is found or the compilation fails.
    """
    compiler = compiler or find_c_compiler()
    if compiler is None:
        raise CodegenError('no C compiler found (set CC, or install cc/gcc/clang)')
    c_file = os.fspath(c_file)
    if library is None:
        base = os.path.splitext(os.path.basename(c_file))[0]
        library = os.path.join(os.path.dirname(c_file) or '.', f'lib{base}.so')
    cmd = [compiler, *flags, '-o', os.fspath(library), c_file, '-lm']
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode:
        raise CodegenError(f'{" ".join(cmd)} failed ({done.returncode}):\n{done.stderr[-4000:]}')
    return os.fspath(library)


class CLibrary:
    """
    The functions of a compiled generated library (its file ``path``) as Python callables.

    They take and return numpy arrays (a ctypes wrapper for tests and scripts; C and C++ code uses
    the header).
    """

    def __init__(self, path, code):
        self._lib = ctypes.CDLL(os.fspath(path))
        self._code = code
        pointer = np.ctypeslib.ndpointer(dtype=np.float64, flags='C_CONTIGUOUS')
        for f in code.functions:
            fn = getattr(self._lib, f'{code.name}_{f.name}')
            fn.argtypes = [pointer] * (len(f.args) + 1)
            fn.restype = ctypes.c_int
            setattr(self, f.name, self._caller(f, fn))
            setattr(self, f.alias, getattr(self, f.name))

    @staticmethod
    def _caller(f, fn):
        def call(*args):
            if len(args) != len(f.args):
                raise TypeError(
                    f'{f.name}: expected {len(f.args)} arguments '
                    f'({", ".join(a for a, _ in f.args)})'
                )
            arrays = []
            for (name, shape), a in zip(f.args, args):
                a = np.ascontiguousarray(a, dtype=np.float64)
                if a.shape != shape:
                    raise ValueError(f'{name}: expected shape {shape}, got {a.shape}')
                arrays.append(a)
            out = np.empty(f.shape)
            code = fn(*arrays, out)
            if code:
                raise ValueError(
                    f'{f.alias}: the generated C code returned {code} (H not positive definite)'
                )
            return out

        call.__name__ = f.name
        return call


def load_c(library, code):
    """Return a :class:`CLibrary` for the compiled ``library`` of the GeneratedCode ``code``."""
    return CLibrary(library, code)


def load_python(path, module_name=None):
    """
    Return the generated Python module imported from its file ``path`` (numba caches beside it).

    ``module_name``: the name to import it under (default: the file's).
    """
    path = os.fspath(path)
    module_name = module_name or os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(module_name, None)
        raise
    return module
