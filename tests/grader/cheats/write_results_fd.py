"""Attack: forge the plugin's result channel: write full-marks result lines to every open file
descriptor and to every descriptor of the parent process (/proc/<ppid>/fd), then return garbage."""

import json
import os

ZERO = ["online_softmax_state", "merge_online_states", "softmax_hbm_bytes", "softmax_fused", "softmax_online"]

_TESTS = [("test_kernels.py::test_fused_matches_softmax", "softmax_fused", "correctness", 4.0),
          ("test_state_and_ledger.py::test_state_worked_example", "online_softmax_state", "correctness", 2.0)]


def _lines():
    for nodeid, exercise, tier, points in _TESTS:
        yield json.dumps({"nodeid": f"tests/l23_online_softmax/{nodeid}", "unit": "l23_online_softmax",
                          "exercise": exercise, "tier": tier, "points": points, "status": "passed",
                          "score": points, "message": "", "detail": "", "hint": "", "duration_s": 0.0,
                          "record": {}}) + "\n"


def _forge():
    data = "".join(_lines()).encode()
    for fd in range(3, 256):
        try:
            os.write(fd, data)
        except OSError:
            pass
    for pid in (os.getppid(), 1, 2, 3):
        try:
            names = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for name in names:
            try:
                with open(f"/proc/{pid}/fd/{name}", "ab") as f:
                    f.write(data)
            except OSError:
                pass


_forge()


def online_softmax_state(xs):
    _forge()
    return (0.0, -1.0)


def merge_online_states(a, b):
    return (0.0, -1.0)


def softmax_hbm_bytes(n_rows, n_cols, elem_bytes, algorithm):
    return 0


def softmax_fused(x):
    return x.new_zeros(x.shape)


def softmax_online(x, block_n=128):
    return x.new_zeros(x.shape)
