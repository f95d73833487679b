"""Classic bug: no argument checks; non-power-of-two caches, unknown types and missing NUMA output are answered."""

MODULE = "cpu_memory"
REJECTED_BY = {
    "cache_decompose": ["correctness"],
    "simulate_cache": ["correctness"],
    "struct_layout": ["correctness"],
    "best_field_order": ["correctness"],
    "parse_numactl": ["correctness"],
    "gpu_cpu_affinity": ["correctness"],
}


def check_int(name, value, minimum=0):
    return int(value)


def _check_pow2(name, value):
    return int(value) or 1


def _check_fields(fields):
    out = []
    for name, ctype in fields:
        base, _, count = str(ctype).partition("[")
        n = int(count[:-1]) if count[:-1].isdigit() else 1
        out.append((name, C_TYPES.get(base, 8) * n, C_TYPES.get(base, 8)))
    return out


_correct_parse_numactl = parse_numactl


def parse_numactl(text):
    if not isinstance(text, str) or "available:" not in text:
        return {"nodes": {}, "distances": []}
    try:
        return _correct_parse_numactl(text)
    except ValueError:
        return {"nodes": {}, "distances": []}


def gpu_cpu_affinity(numactl_text, gpu_numa):
    nodes = parse_numactl(numactl_text)["nodes"]
    every = sorted(c for node in nodes.values() for c in node["cpus"])
    items = gpu_numa.items() if isinstance(gpu_numa, dict) else gpu_numa
    return {gpu: every if node == -1 else sorted(nodes.get(node, {"cpus": []})["cpus"]) for gpu, node in items}
