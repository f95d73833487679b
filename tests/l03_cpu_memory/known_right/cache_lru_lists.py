"""Another correct simulator: each set a Python list, most recently used at the end (O(ways) per access)."""

MODULE = "cpu_memory"
ACCEPTED = ["simulate_cache"]


def simulate_cache(addresses, line_bytes=64, n_sets=64, ways=8):
    line, sets = _check_pow2("line_bytes", line_bytes), _check_pow2("n_sets", n_sets)
    n_ways = check_int("ways", ways, 1)
    table = [[] for _ in range(sets)]
    hits = misses = evictions = accesses = 0
    for a in addresses:
        if isinstance(a, bool) or not isinstance(a, int) or a < 0:
            raise ValueError(f"addresses must be ints >= 0, got {a!r}")
        block = a // line
        row, tag = table[block % sets], block // sets
        accesses += 1
        if tag in row:
            hits += 1
            row.remove(tag)
        else:
            misses += 1
            if len(row) == n_ways:
                row.pop(0)
                evictions += 1
        row.append(tag)
    return {"accesses": accesses, "hits": hits, "misses": misses, "evictions": evictions}
