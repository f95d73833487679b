"""Weights in GiB divided by a bandwidth in decimal GB/s: 7 % too fast (GB vs GiB)."""

MODULE = "landscape"
REJECTED_BY = {"decode_floor_s": ["correctness"]}


def decode_floor_s(weight_bytes, hbm_bytes_per_s, n_gpus=1):
    w = check_int("weight_bytes", weight_bytes)
    bw = _check_real("hbm_bytes_per_s", hbm_bytes_per_s)
    n = check_int("n_gpus", n_gpus, 1)
    return (w / 2**30) / n / (bw / 10**9)
