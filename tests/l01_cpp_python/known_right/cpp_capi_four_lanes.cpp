// Another correct extension, written against CPython's C API alone (no pybind11): the module is a PyMethodDef
// table and PyInit_ext, every reference is counted by hand, the checks compare against torch's own objects
// (torch.float32, the device type "cpu"), scale_inplace uses std::transform in place, and sum_nogil releases the
// GIL with Py_BEGIN_ALLOW_THREADS / Py_END_ALLOW_THREADS around four independent double accumulators.
// The binding does not matter to the grader: what the functions do to the caller's tensor and to the GIL does.
// MODULE = "ext"
// ACCEPTED = ["scale_inplace", "sum_nogil"]
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <algorithm>
#include <cstdint>

struct Span {
    float *data;
    int64_t size;
};

// x.<name>(), or x.<name> when call is false: a new reference, or nullptr with a Python error set.
static PyObject *attr(PyObject *x, const char *name, bool call) {
    PyObject *a = PyObject_GetAttrString(x, name);
    if (a == nullptr || !call) return a;
    PyObject *r = PyObject_CallNoArgs(a);
    Py_DECREF(a);
    return r;
}

// 1: equal, 0: not, -1: a Python error is set.
static int attr_equals(PyObject *x, const char *outer, const char *inner, PyObject *want) {
    PyObject *a = attr(x, outer, false);
    if (a == nullptr) return -1;
    PyObject *b = inner ? attr(a, inner, false) : (Py_INCREF(a), a);
    Py_DECREF(a);
    if (b == nullptr) return -1;
    int eq = PyObject_RichCompareBool(b, want, Py_EQ);
    Py_DECREF(b);
    return eq;
}

static bool checked(PyObject *x, Span *out) {
    PyObject *torch = PyImport_ImportModule("torch");
    if (torch == nullptr) return false;
    PyObject *float32 = PyObject_GetAttrString(torch, "float32");
    Py_DECREF(torch);
    PyObject *cpu = PyUnicode_FromString("cpu");
    if (float32 == nullptr || cpu == nullptr) {
        Py_XDECREF(float32);
        Py_XDECREF(cpu);
        return false;
    }
    int on_cpu = attr_equals(x, "device", "type", cpu);
    int is_f32 = on_cpu == 1 ? attr_equals(x, "dtype", nullptr, float32) : 0;
    Py_DECREF(float32);
    Py_DECREF(cpu);
    if (on_cpu < 0 || is_f32 < 0) return false;
    if (!on_cpu) {
        PyErr_SetString(PyExc_ValueError, "x must live on the CPU");
        return false;
    }
    if (!is_f32) {
        PyErr_SetString(PyExc_ValueError, "x must be torch.float32");
        return false;
    }
    PyObject *contiguous = attr(x, "is_contiguous", true);
    if (contiguous == nullptr) return false;
    int ok = PyObject_IsTrue(contiguous);
    Py_DECREF(contiguous);
    if (ok <= 0) {
        if (ok == 0) PyErr_SetString(PyExc_ValueError, "x must be contiguous (call x.contiguous() to copy it)");
        return false;
    }
    PyObject *ptr = attr(x, "data_ptr", true), *numel = attr(x, "numel", true);
    bool good = ptr != nullptr && numel != nullptr;
    if (good) {
        out->data = reinterpret_cast<float *>(static_cast<std::uintptr_t>(PyLong_AsUnsignedLongLong(ptr)));
        out->size = PyLong_AsLongLong(numel);
        good = !PyErr_Occurred();
    }
    Py_XDECREF(ptr);
    Py_XDECREF(numel);
    return good;
}

static PyObject *scale_inplace(PyObject *, PyObject *args) {
    PyObject *x = nullptr;
    float a = 0.0f;
    Span s{};
    if (!PyArg_ParseTuple(args, "Of", &x, &a) || !checked(x, &s)) return nullptr;
    std::transform(s.data, s.data + s.size, s.data, [a](float v) { return v * a; });
    Py_RETURN_NONE;
}

static PyObject *sum_nogil(PyObject *, PyObject *args) {
    PyObject *x = nullptr;
    Span s{};
    if (!PyArg_ParseTuple(args, "O", &x) || !checked(x, &s)) return nullptr;
    double lane[4] = {0.0, 0.0, 0.0, 0.0};
    Py_BEGIN_ALLOW_THREADS
    int64_t i = 0;
    for (; i + 4 <= s.size; i += 4) {
        for (int k = 0; k < 4; ++k) lane[k] += s.data[i + k];
    }
    for (; i < s.size; ++i) lane[0] += s.data[i];
    Py_END_ALLOW_THREADS
    return PyFloat_FromDouble((lane[0] + lane[1]) + (lane[2] + lane[3]));
}

static PyMethodDef methods[] = {
    {"scale_inplace", scale_inplace, METH_VARARGS, "x *= a in place"},
    {"sum_nogil", sum_nogil, METH_VARARGS, "the sum of x, the GIL released"},
    {nullptr, nullptr, 0, nullptr},
};

static PyModuleDef module = {PyModuleDef_HEAD_INIT, "ext", nullptr, -1, methods};

PyMODINIT_FUNC PyInit_ext(void) { return PyModule_Create(&module); }
