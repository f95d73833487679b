"""Classic bug: torch.cuda.is_available() taken as NVIDIA: a ROCm build is reported as cuda."""

MODULE = "npu"
REJECTED_BY = {"detect_backend": ["correctness"]}


def detect_backend(torch_npu_importable, npu_available, cuda_available, hip_version):
    _check_flag("torch_npu_importable", torch_npu_importable)
    _check_flag("npu_available", npu_available)
    _check_flag("cuda_available", cuda_available)
    if hip_version is not None and not isinstance(hip_version, str):
        raise ValueError("hip_version must be a str or None")
    if torch_npu_importable and npu_available:
        return "npu"
    return "cuda" if cuda_available else "cpu"
