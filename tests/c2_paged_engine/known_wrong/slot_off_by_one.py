"""Classic bug: K/V written one slot late (block·B + offset + 1): every read finds its neighbour's key."""

MODULE = "engine"
REJECTED_BY = {"write_kv": ["correctness"], "PagedEngine": ["correctness"]}


def write_kv(k_cache, v_cache, k, v, slots):
    total = k_cache.shape[0] * k_cache.shape[1]
    for cache, rows in ((k_cache, k), (v_cache, v)):
        cache.view(-1, *cache.shape[2:])[(slots + 1) % total] = rows.to(cache.dtype)
