"""Classic bug: numa_node -1 read as node 0 (or as 'any node is fine'): the GPU gets half the machine."""

MODULE = "cpu_memory"
REJECTED_BY = {"gpu_cpu_affinity": ["correctness"]}

_correct_gpu_cpu_affinity = gpu_cpu_affinity


def gpu_cpu_affinity(numactl_text, gpu_numa):
    if isinstance(gpu_numa, dict):
        gpu_numa = {k: (0 if v == -1 else v) for k, v in gpu_numa.items()}
    return _correct_gpu_cpu_affinity(numactl_text, gpu_numa)
