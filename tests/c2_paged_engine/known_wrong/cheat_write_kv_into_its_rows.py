"""Cheat (learner writes flow into the expectation): write_kv leaves the caches as they were and copies each slot's
old cache row into k and v instead. The test built the expected caches after the call from k and v, so "row t at
slot s" held for caches never written; in batch grading too, where tensor arguments were copied back from the
worker. Now only the declared caches are written back, and a write into k or v is refused."""

MODULE = "engine"
REJECTED_BY = {"write_kv": ["correctness"]}


def write_kv(k_cache, v_cache, k, v, slots):
    for cache, rows in ((k_cache, k), (v_cache, v)):
        rows.copy_(cache.view(-1, *cache.shape[2:])[slots].to(rows.dtype))
