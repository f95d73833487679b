// Classic mistakes: the raw pointer trusted without checking the tensor, scale_inplace returning x * a (a new
// tensor: the caller's x is unchanged), and sum_nogil adding into a float, which stops growing at 2^24
// (16777216.0f + 1.0f == 16777216.0f). A meta tensor's data_ptr() is 0: sum_nogil dereferences it and the process
// dies of SIGSEGV, which the grader's child process turns into one failed test.
// MODULE = "ext"
// REJECTED_BY = {"scale_inplace": ["correctness"], "sum_nogil": ["correctness"]}
#include <pybind11/pybind11.h>

#include <cstdint>

namespace py = pybind11;

py::object scale_inplace(py::object x, float a) {
    return x.attr("mul")(a);
}

double sum_nogil(py::object x) {
    const int64_t n = x.attr("numel")().cast<int64_t>();
    const float *p = reinterpret_cast<const float *>(x.attr("data_ptr")().cast<std::uintptr_t>());
    float total = 0.0f;
    {
        py::gil_scoped_release nogil;
        for (int64_t i = 0; i < n; ++i) total += p[i];
    }
    return total;
}

PYBIND11_MODULE(ext, m) {
    m.def("scale_inplace", &scale_inplace, py::arg("x"), py::arg("a"));
    m.def("sum_nogil", &sum_nogil, py::arg("x"));
}
