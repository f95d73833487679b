"""Classic bug: "rocm:i" for AMD GPUs; PyTorch's ROCm builds use the cuda device type ("cuda:i")."""

MODULE = "npu"
REJECTED_BY = {"device_string": ["correctness"]}


def device_string(backend, index=0):
    if not isinstance(backend, str) or backend not in BACKENDS:
        raise ValueError("backend unknown")
    check_int("index", index)
    return "cpu" if backend == "cpu" else f"{backend}:{index}"
