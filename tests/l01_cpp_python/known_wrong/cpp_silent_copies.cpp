// Classic mistakes: scale_inplace (after checking the device) makes x contiguous float32, a copy when it is not,
// scales the copy and writes it back: a non-contiguous or float64 x is accepted silently, and new storage is made
// on every call; sum_nogil never releases the GIL, so no other Python thread runs during its loop.
// MODULE = "ext"
// REJECTED_BY = {"scale_inplace": ["correctness"], "sum_nogil": ["efficiency"]}
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>

namespace py = pybind11;

static float *float32_data(py::handle x, const char *name, int64_t *n) {
    const std::string arg(name);
    if (std::string(py::str(x.attr("device").attr("type"))) != "cpu") throw py::value_error(arg + ": not a CPU tensor");
    if (std::string(py::str(x.attr("dtype"))) != "torch.float32") throw py::value_error(arg + ": not float32");
    if (!x.attr("is_contiguous")().cast<bool>()) throw py::value_error(arg + ": not contiguous");
    *n = x.attr("numel")().cast<int64_t>();
    return reinterpret_cast<float *>(x.attr("data_ptr")().cast<std::uintptr_t>());
}

void scale_inplace(py::object x, float a) {
    if (std::string(py::str(x.attr("device").attr("type"))) != "cpu") throw py::value_error("x: not a CPU tensor");
    py::object torch = py::module_::import("torch");
    py::object y = x.attr("contiguous")().attr("to")(torch.attr("float32")).attr("clone")();
    int64_t n = y.attr("numel")().cast<int64_t>();
    float *p = reinterpret_cast<float *>(y.attr("data_ptr")().cast<std::uintptr_t>());
    for (int64_t i = 0; i < n; ++i) p[i] *= a;
    x.attr("copy_")(y);
}

double sum_nogil(py::object x) {
    int64_t n = 0;
    const float *p = float32_data(x, "x", &n);
    double total = 0.0;
    for (int64_t i = 0; i < n; ++i) total += p[i];  // the GIL stays held
    return total;
}

PYBIND11_MODULE(ext, m) {
    m.def("scale_inplace", &scale_inplace, py::arg("x"), py::arg("a"));
    m.def("sum_nogil", &sum_nogil, py::arg("x"));
}
