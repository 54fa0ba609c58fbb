/* The fast call of a compiled kernel: its arguments' types checked in C, then the kernel.
 *
 *     call(kernel, kinds, *args)  ->  kernel(*args), or None
 *
 * ``kinds`` is a bytes object with one byte per argument: 0 = not checked (the caller's own
 * arrays: model, workspace, outputs), 1..4 = a numpy array of float64 in native byte order with
 * that many dimensions (any strides: the kernels index with them), 'b' = exactly True or False.
 * When every argument is of its kind, the kernel is called and its result returned; otherwise
 * None, and the caller takes its checking path (Python) instead.  The compiled kernels trust
 * their argument types (numba's unboxing does not check them), so this is what makes calling
 * them safe; done here it costs a few nanoseconds per argument instead of ~45 ns in Python.
 *
 * Built by spart_ros/native/build.py beside the kernels' module (MODULE_NAME is its name).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

static PyObject *call(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs < 2 || !PyBytes_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "call(kernel, kinds, *args): kinds must be bytes");
        return NULL;
    }
    const char *kinds = PyBytes_AS_STRING(args[1]);
    Py_ssize_t n = nargs - 2;
    if (PyBytes_GET_SIZE(args[1]) != n) {
        PyErr_SetString(PyExc_TypeError, "call(kernel, kinds, *args): one kind per argument");
        return NULL;
    }
    PyObject *const *a = args + 2;
    for (Py_ssize_t i = 0; i < n; i++) {
        char k = kinds[i];
        if (k == 0)
            continue;
        if (k == 'b') {
            if (a[i] != Py_True && a[i] != Py_False)
                Py_RETURN_NONE;
            continue;
        }
        if (!PyArray_Check(a[i]))
            Py_RETURN_NONE;
        PyArrayObject *x = (PyArrayObject *)a[i];
        if (PyArray_TYPE(x) != NPY_DOUBLE || PyArray_NDIM(x) != k || PyArray_ISBYTESWAPPED(x))
            Py_RETURN_NONE;
    }
    return PyObject_Vectorcall(args[0], a, n, NULL);
}

static PyMethodDef methods[] = {
    {"call", (PyCFunction)(void (*)(void))call, METH_FASTCALL,
     "call(kernel, kinds, *args): kernel(*args) if every argument is of its kind, else None"},
    {NULL, NULL, 0, NULL}
};

#define STR2(x) #x
#define STR(x) STR2(x)
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, STR(MODULE_NAME), NULL, -1, methods};

PyMODINIT_FUNC CAT(PyInit_, MODULE_NAME)(void)
{
    import_array();
    return PyModule_Create(&module);
}
