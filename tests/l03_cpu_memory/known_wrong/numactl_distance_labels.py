"""Bug: each distance row keeps its 'N:' label as a number ([0, 10, 21] instead of [10, 21])."""

MODULE = "cpu_memory"
REJECTED_BY = {"parse_numactl": ["correctness"]}

_correct_parse_numactl = parse_numactl


def parse_numactl(text):
    got = _correct_parse_numactl(text)
    return {**got, "distances": [[i, *row] for i, row in enumerate(got["distances"])]}
