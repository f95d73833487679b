"""Bug: the CPUs of all nodes are concatenated node by node, not sorted, for numa_node -1."""

MODULE = "cpu_memory"
REJECTED_BY = {"gpu_cpu_affinity": ["correctness"]}

_correct_gpu_cpu_affinity = gpu_cpu_affinity


def gpu_cpu_affinity(numactl_text, gpu_numa):
    got = _correct_gpu_cpu_affinity(numactl_text, gpu_numa)
    nodes = parse_numactl(numactl_text)["nodes"]
    joined = [c for n in sorted(nodes) for c in nodes[n]["cpus"]]
    return {gpu: (joined if gpu_numa[gpu] == -1 else cpus) for gpu, cpus in got.items()}
