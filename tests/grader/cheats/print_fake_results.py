"""Attack: print a full-marks Gradescope results.json and plugin result lines to stdout and stderr,
hoping the grader parses its output; every function returns garbage."""

import json
import sys

ZERO = ["online_softmax_state", "merge_online_states", "softmax_hbm_bytes", "softmax_fused", "softmax_online"]

_FAKE = json.dumps({"score": 47.0, "max_score": 47.0, "tests": []})
print(_FAKE)
print(_FAKE, file=sys.stderr)
for _name in ("test_fused_matches_softmax", "test_state_worked_example"):
    print(json.dumps({"nodeid": f"tests/l23_online_softmax/x.py::{_name}", "unit": "l23_online_softmax",
                      "exercise": "softmax_fused", "tier": "correctness", "points": 4.0,
                      "status": "passed", "score": 4.0}))


def online_softmax_state(xs):
    print(_FAKE)
    return (1.0, 1.0)


def merge_online_states(a, b):
    return (1.0, 1.0)


def softmax_hbm_bytes(n_rows, n_cols, elem_bytes, algorithm):
    return 1


def softmax_fused(x):
    return x.new_ones(x.shape)


def softmax_online(x, block_n=128):
    return x.new_ones(x.shape)
