// Another correct extension: the checks compare against torch's own objects (torch.float32, a CPU device),
// scale_inplace uses std::transform in place, and sum_nogil releases the GIL with the C API's
// Py_BEGIN_ALLOW_THREADS / Py_END_ALLOW_THREADS around four independent double accumulators.
// MODULE = "ext"
// ACCEPTED = ["scale_inplace", "sum_nogil"]
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cstdint>
#include <string>

namespace py = pybind11;

struct Span {
    float *data;
    int64_t size;
};

static Span checked(const py::object &x) {
    py::module_ torch = py::module_::import("torch");
    py::object device = x.attr("device").attr("type"), dtype = x.attr("dtype");
    if (!device.equal(py::str("cpu"))) {
        throw py::value_error("x must live on the CPU, got " + std::string(py::str(x.attr("device"))));
    }
    if (!dtype.equal(torch.attr("float32"))) {
        throw py::value_error("x must be torch.float32, got " + std::string(py::str(x.attr("dtype"))));
    }
    if (!py::bool_(x.attr("is_contiguous")())) {
        throw py::value_error("x must be contiguous (its strides are " + std::string(py::str(x.attr("stride")())) + ")");
    }
    return {reinterpret_cast<float *>(py::int_(x.attr("data_ptr")()).cast<std::uintptr_t>()),
            py::int_(x.attr("numel")()).cast<int64_t>()};
}

void scale_inplace(py::object x, float a) {
    Span s = checked(x);
    std::transform(s.data, s.data + s.size, s.data, [a](float v) { return v * a; });
}

double sum_nogil(py::object x) {
    Span s = checked(x);
    double lane[4] = {0.0, 0.0, 0.0, 0.0};
    Py_BEGIN_ALLOW_THREADS
    int64_t i = 0;
    for (; i + 4 <= s.size; i += 4) {
        for (int k = 0; k < 4; ++k) lane[k] += s.data[i + k];
    }
    for (; i < s.size; ++i) lane[0] += s.data[i];
    Py_END_ALLOW_THREADS
    return (lane[0] + lane[1]) + (lane[2] + lane[3]);
}

PYBIND11_MODULE(ext, m) {
    m.def("scale_inplace", &scale_inplace);
    m.def("sum_nogil", &sum_nogil);
}
