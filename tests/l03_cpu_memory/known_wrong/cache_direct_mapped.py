"""Bug: the ways are ignored, every set holds one line (a direct-mapped cache of the same number of sets)."""

MODULE = "cpu_memory"
REJECTED_BY = {"simulate_cache": ["correctness"]}

_correct_simulate_cache = simulate_cache


def simulate_cache(addresses, line_bytes=64, n_sets=64, ways=8):
    check_int("ways", ways, 1)
    return _correct_simulate_cache(addresses, line_bytes, n_sets, 1)
