"""Eager time as the launch sum n·L (10,080 µs): the last kernel's own run time and the GPU-bound case forgotten."""

MODULE = "async_exec"
REJECTED_BY = {"eager_vs_graph": ["correctness"]}


def eager_vs_graph(n_kernels, kernel_us, launch_us, graph_launch_us):
    n = check_int("n_kernels", n_kernels, 1)
    k = _check_real("kernel_us", kernel_us, positive=True)
    launch = _check_real("launch_us", launch_us, positive=False)
    graph_launch = _check_real("graph_launch_us", graph_launch_us, positive=False)
    busy = n * k
    eager = max(n * launch, busy)
    graph = graph_launch + busy
    return {"eager_us": eager, "graph_us": graph, "gpu_busy_us": busy, "eager_util": busy / eager,
            "graph_util": busy / graph, "speedup": eager / graph}
