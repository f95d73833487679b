"""Classic bug: only the forward's two all-reduces per layer; the backward's two are forgotten."""

MODULE = "parallel"
REJECTED_BY = {"tp_allreduce_bytes_per_layer": ["correctness"]}

_correct_tp = tp_allreduce_bytes_per_layer


def tp_allreduce_bytes_per_layer(batch, seq_len, hidden, tp, elem_bytes=2):
    return _correct_tp(batch, seq_len, hidden, tp, elem_bytes) // 2 if tp > 1 else 0
