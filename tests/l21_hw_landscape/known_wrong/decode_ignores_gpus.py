"""Ignores n_gpus: with tensor parallelism every GPU would still read all the weights."""

MODULE = "landscape"
REJECTED_BY = {"decode_floor_s": ["correctness"]}


def decode_floor_s(weight_bytes, hbm_bytes_per_s, n_gpus=1):
    check_int("n_gpus", n_gpus, 1)
    return check_int("weight_bytes", weight_bytes) / _check_real("hbm_bytes_per_s", hbm_bytes_per_s)
