"""Cheat (learner writes flow into the expectation, through an alias): as cheat_write_kv_into_its_rows, each slot's
old cache row is copied into k and v, here through NumPy views of them (k.numpy() shares k's memory), no torch op
on the arguments themselves. The test built the expected caches after the call from k and v. Now k and v are
copies, compared by value after the call: the write is refused whatever reached the memory."""

MODULE = "engine"
REJECTED_BY = {"write_kv": ["correctness"]}


def write_kv(k_cache, v_cache, k, v, slots):
    rows_at = slots.numpy()
    for cache, rows in ((k_cache, k), (v_cache, v)):
        rows.numpy()[...] = cache.numpy().reshape(-1, *cache.shape[2:])[rows_at]
