// L01 · a C++ extension across the Python boundary (pybind11): zero copy, and the GIL released.
//
// The grader compiles this file with g++ and pybind11 (no torch headers): a tensor reaches C++ as a Python
// object, and the extension asks it for what zero copy needs (its device, its dtype, its layout, its data
// pointer). Build it by hand with `load_ext()` from boundary.py.
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>

namespace py = pybind11;

// A stub's unwritten part raises NotImplementedError (the grader reports the function as TODO).
#define DRIPSTONE_TODO(msg)                                  \
    do {                                                     \
        PyErr_SetString(PyExc_NotImplementedError, (msg));   \
        throw py::error_already_set();                       \
    } while (0)

// What both functions need before they touch x's memory: x must be a contiguous float32 tensor on the CPU,
// else py::value_error naming the argument (`name`), never a silent copy. Returns its data pointer (the first
// element, storage offset included) and sets *n to its number of elements.
static float *float32_data(py::handle x, const char *name, int64_t *n) {
    // TODO: refuse (py::value_error naming `name`) a non-CPU tensor (check first: a meta tensor's data_ptr()
    // is 0), a dtype other than torch.float32 and a non-contiguous layout; then return data_ptr() as float*
    DRIPSTONE_TODO("TODO: refuse (py::value_error naming `name`) a non-CPU tensor (check first: a meta tensor's data_ptr() is 0), a dtype other than torch.float32 and a non-contiguous layout; then return data_ptr() as float*");
}

// x *= a in place: the caller's own storage changes, no tensor is made. Returns None.
void scale_inplace(py::object x, float a) {
    // TODO: scale x's elements by a through its data pointer (float32_data): no copy, no new tensor
    DRIPSTONE_TODO("TODO: scale x's elements by a through its data pointer (float32_data): no copy, no new tensor");
}

// The sum of x's elements, accumulated in double, with the GIL released during the loop: other Python threads
// run meanwhile. Everything that touches a Python object (x's attributes) happens before the release.
double sum_nogil(py::object x) {
    // TODO: take x's pointer and size with the GIL held, then sum in double inside a py::gil_scoped_release scope
    DRIPSTONE_TODO("TODO: take x's pointer and size with the GIL held, then sum in double inside a py::gil_scoped_release scope");
}

PYBIND11_MODULE(ext, m) {
    m.doc() = "L01: scale_inplace (zero copy) and sum_nogil (the GIL released)";
    m.def("scale_inplace", &scale_inplace, py::arg("x"), py::arg("a"));
    m.def("sum_nogil", &sum_nogil, py::arg("x"));
}
