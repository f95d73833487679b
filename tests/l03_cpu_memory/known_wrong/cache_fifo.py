"""Classic bug: a hit does not refresh the line, so the set evicts in arrival order (FIFO), not LRU."""

MODULE = "cpu_memory"
REJECTED_BY = {"simulate_cache": ["correctness"]}


def simulate_cache(addresses, line_bytes=64, n_sets=64, ways=8):
    line, sets = _check_pow2("line_bytes", line_bytes), _check_pow2("n_sets", n_sets)
    n_ways = check_int("ways", ways, 1)
    cache = [[] for _ in range(sets)]
    counts = {"accesses": 0, "hits": 0, "misses": 0, "evictions": 0}
    for a in addresses:
        if isinstance(a, bool) or not isinstance(a, int) or a < 0:
            raise ValueError(f"addresses must be ints >= 0, got {a!r}")
        tag, index = divmod(a // line, sets)
        counts["accesses"] += 1
        if tag in cache[index]:
            counts["hits"] += 1
            continue
        counts["misses"] += 1
        if len(cache[index]) == n_ways:
            cache[index].pop(0)
            counts["evictions"] += 1
        cache[index].append(tag)
    return counts
