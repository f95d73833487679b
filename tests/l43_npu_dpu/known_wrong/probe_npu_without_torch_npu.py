"""Classic bug: "npu" as soon as either probe says so: without torch_npu the NPU cannot be driven."""

MODULE = "npu"
REJECTED_BY = {"detect_backend": ["correctness"]}


def detect_backend(torch_npu_importable, npu_available, cuda_available, hip_version):
    _check_flag("torch_npu_importable", torch_npu_importable)
    _check_flag("npu_available", npu_available)
    _check_flag("cuda_available", cuda_available)
    if hip_version is not None and not isinstance(hip_version, str):
        raise ValueError("hip_version must be a str or None")
    if torch_npu_importable or npu_available:
        return "npu"
    if cuda_available:
        return "rocm" if hip_version is not None else "cuda"
    return "cpu"
