"""Classic bug: "cpu:i" like the accelerators; the lecture's layer returns plain "cpu"."""

MODULE = "npu"
REJECTED_BY = {"device_string": ["correctness"]}


def device_string(backend, index=0):
    if not isinstance(backend, str) or backend not in BACKENDS:
        raise ValueError("backend unknown")
    check_int("index", index)
    kind = {"npu": "npu", "cuda": "cuda", "rocm": "cuda", "cpu": "cpu"}[backend]
    return f"{kind}:{index}"
