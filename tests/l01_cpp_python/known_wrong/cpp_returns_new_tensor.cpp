// Classic mistakes (written against CPython's C API, no pybind11: the binding does not save them): the raw pointer
// trusted without checking the tensor, scale_inplace returning x * a (a new tensor: the caller's x is unchanged),
// and sum_nogil adding into a float, which stops growing at 2^24 (16777216.0f + 1.0f == 16777216.0f). A meta
// tensor's data_ptr() is 0: sum_nogil dereferences it and the process dies of SIGSEGV, which the grader's child
// process turns into one failed test.
// MODULE = "ext"
// REJECTED_BY = {"scale_inplace": ["correctness"], "sum_nogil": ["correctness"]}
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <cstdint>

static PyObject *scale_inplace(PyObject *, PyObject *args) {
    PyObject *x = nullptr;
    float a = 0.0f;
    if (!PyArg_ParseTuple(args, "Of", &x, &a)) return nullptr;
    return PyObject_CallMethod(x, "mul", "d", static_cast<double>(a));
}

static PyObject *sum_nogil(PyObject *, PyObject *args) {
    PyObject *x = nullptr;
    if (!PyArg_ParseTuple(args, "O", &x)) return nullptr;
    PyObject *numel = PyObject_CallMethod(x, "numel", nullptr);
    PyObject *ptr = PyObject_CallMethod(x, "data_ptr", nullptr);
    if (numel == nullptr || ptr == nullptr) {
        Py_XDECREF(numel);
        Py_XDECREF(ptr);
        return nullptr;
    }
    const int64_t n = PyLong_AsLongLong(numel);
    const float *p = reinterpret_cast<const float *>(static_cast<std::uintptr_t>(PyLong_AsUnsignedLongLong(ptr)));
    Py_DECREF(numel);
    Py_DECREF(ptr);
    float total = 0.0f;
    Py_BEGIN_ALLOW_THREADS
    for (int64_t i = 0; i < n; ++i) total += p[i];
    Py_END_ALLOW_THREADS
    return PyFloat_FromDouble(total);
}

static PyMethodDef methods[] = {
    {"scale_inplace", scale_inplace, METH_VARARGS, nullptr},
    {"sum_nogil", sum_nogil, METH_VARARGS, nullptr},
    {nullptr, nullptr, 0, nullptr},
};

static PyModuleDef module = {PyModuleDef_HEAD_INIT, "ext", nullptr, -1, methods};

PyMODINIT_FUNC PyInit_ext(void) { return PyModule_Create(&module); }
