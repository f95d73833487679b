"""Async staging of the whole state over one link: forgets that each rank copies only its shard."""

MODULE = "checkpoint"
REJECTED_BY = {"async_stage_seconds": ["correctness"]}


def async_stage_seconds(state_bytes, n_ranks, d2h_bytes_per_s):
    check_int("state_bytes", state_bytes)
    check_int("n_ranks", n_ranks, 1)
    return state_bytes / _check_real("d2h_bytes_per_s", d2h_bytes_per_s, positive=True)
