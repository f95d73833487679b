"""Correct alternative: heads per GPU as ceil(H_kv / TP); B_max by repeated subtraction of whole requests (bounded)."""

MODULE = "capacity"
ACCEPTED = ["kv_bytes_per_token_per_gpu", "b_max"]


def kv_bytes_per_token_per_gpu(n_layers, n_kv_heads, head_dim, tp, elem_bytes=2):
    for name, value, low in [
        ("n_layers", n_layers, 0),
        ("n_kv_heads", n_kv_heads, 1),
        ("head_dim", head_dim, 0),
        ("tp", tp, 1),
        ("elem_bytes", elem_bytes, 0),
    ]:
        check_int(name, value, low)
    if n_kv_heads % tp and tp % n_kv_heads:
        raise ValueError(f"tp = {tp} does not split n_kv_heads = {n_kv_heads} evenly")
    heads = -(-n_kv_heads // tp)
    k = v = n_layers * heads * head_dim * elem_bytes
    return k + v


def b_max(pool_bytes, kv_per_token_per_gpu, s_total):
    check_int("pool_bytes", pool_bytes)
    per_request = check_int("kv_per_token_per_gpu", kv_per_token_per_gpu, 1) * check_int("s_total", s_total, 1)
    count, step = 0, per_request
    while step * 2 <= pool_bytes:  # doubling search: whole requests only
        step *= 2
    left = pool_bytes
    while step >= per_request:
        if left >= step:
            left -= step
            count += step // per_request
        step //= 2
    return count
