"""No argument checks: floats, bools, negative times, malformed ops and non-str sources are accepted."""

MODULE = "async_exec"
REJECTED_BY = {
    "launch_bound_utilization": ["correctness"],
    "eager_vs_graph": ["correctness"],
    "vllm_capture_sizes": ["correctness"],
    "graph_bucket": ["correctness"],
    "simulate_streams": ["correctness"],
    "find_implicit_syncs": ["correctness"],
}

check_int = lambda name, value, minimum=0: value
_check_real = lambda name, value, *, positive: value
_check_capture_sizes = lambda capture_sizes: list(capture_sizes) if hasattr(capture_sizes, "__iter__") else [0]
_check_op = lambda i, op, kernels, events: tuple(op)
_real_lint = find_implicit_syncs


def find_implicit_syncs(source):
    if isinstance(source, bytes):
        source = source.decode()
    try:
        return _real_lint(source or "")
    except ValueError:
        return []
