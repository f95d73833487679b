"""Course erratum #5: the 2-byte element size counted twice in the TP message (2.15 GB/layer for 70B)."""

MODULE = "parallel"
REJECTED_BY = {"tp_allreduce_bytes_per_layer": ["correctness"]}

_correct_tp = tp_allreduce_bytes_per_layer


def tp_allreduce_bytes_per_layer(batch, seq_len, hidden, tp, elem_bytes=2):
    return _correct_tp(batch, seq_len, hidden, tp, elem_bytes) * elem_bytes
