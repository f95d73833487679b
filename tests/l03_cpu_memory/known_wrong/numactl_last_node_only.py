"""Bug: every node line is written into one record (the nodes overwrite each other), keyed by the last id seen."""

MODULE = "cpu_memory"
REJECTED_BY = {"parse_numactl": ["correctness"], "gpu_cpu_affinity": ["correctness"]}

_correct_parse_numactl = parse_numactl


def parse_numactl(text):
    got = _correct_parse_numactl(text)
    if not got["nodes"]:
        return got
    last = max(got["nodes"])
    return {**got, "nodes": {last: got["nodes"][last]}}
