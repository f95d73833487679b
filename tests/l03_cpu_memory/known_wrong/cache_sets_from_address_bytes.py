"""Bug: the set index is taken from the byte address (addr mod n_sets), not from the line number."""

MODULE = "cpu_memory"
REJECTED_BY = {"simulate_cache": ["correctness"]}


def simulate_cache(addresses, line_bytes=64, n_sets=64, ways=8):
    line, sets = _check_pow2("line_bytes", line_bytes), _check_pow2("n_sets", n_sets)
    n_ways = check_int("ways", ways, 1)
    cache = [{} for _ in range(sets)]
    counts = {"accesses": 0, "hits": 0, "misses": 0, "evictions": 0}
    for a in addresses:
        if isinstance(a, bool) or not isinstance(a, int) or a < 0:
            raise ValueError(f"addresses must be ints >= 0, got {a!r}")
        index, tag = a % sets, a // line
        lru = cache[index]
        counts["accesses"] += 1
        if tag in lru:
            counts["hits"] += 1
            del lru[tag]
        else:
            counts["misses"] += 1
            if len(lru) == n_ways:
                del lru[next(iter(lru))]
                counts["evictions"] += 1
        lru[tag] = None
    return counts
