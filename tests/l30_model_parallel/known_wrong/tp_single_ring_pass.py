"""Classic bug: an all-reduce counted as (N−1)/N·M (one ring pass) instead of 2(N−1)/N·M."""

MODULE = "parallel"
REJECTED_BY = {"tp_allreduce_bytes_per_layer": ["correctness"]}

_correct_tp = tp_allreduce_bytes_per_layer


def tp_allreduce_bytes_per_layer(batch, seq_len, hidden, tp, elem_bytes=2):
    return _correct_tp(batch, seq_len, hidden, tp, elem_bytes) // 2
