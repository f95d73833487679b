"""Classic bug: only the forward attention FLOPs (4·L·S²·d) against the training weight FLOPs 6PS."""

MODULE = "ledger"
REJECTED_BY = {"attention_flops_share": ["correctness"]}

_correct_attention_flops_share = attention_flops_share


def attention_flops_share(n_layers, hidden, n_params, seq_len):
    return _correct_attention_flops_share(n_layers, hidden, n_params, seq_len) / 3
