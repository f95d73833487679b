"""Correct alternative: play the eager pipeline kernel by kernel instead of using the closed form."""

MODULE = "async_exec"
ACCEPTED = ["eager_vs_graph"]


def eager_vs_graph(n_kernels, kernel_us, launch_us, graph_launch_us):
    n = check_int("n_kernels", n_kernels, 1)
    k = _check_real("kernel_us", kernel_us, positive=True)
    launch = _check_real("launch_us", launch_us, positive=False)
    graph_launch = _check_real("graph_launch_us", graph_launch_us, positive=False)
    host, gpu_free = 0.0, 0.0
    for _ in range(n):
        host += launch
        gpu_free = max(host, gpu_free) + k
    busy = k * n
    graph = graph_launch + busy
    return {"eager_us": gpu_free, "graph_us": graph, "gpu_busy_us": busy, "eager_util": busy / gpu_free,
            "graph_util": busy / graph, "speedup": gpu_free / graph}
