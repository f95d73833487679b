"""Correct alternative: per-token bytes summed over layers, times the tokens; the share as a Fraction."""

MODULE = "ledger"
ACCEPTED = ["kv_cache_bytes", "attention_flops_share"]

from fractions import Fraction


def kv_cache_bytes(n_layers, n_kv_heads, head_dim, seq_len, batch, elem_bytes=2):
    args = dict(
        n_layers=n_layers, n_kv_heads=n_kv_heads, head_dim=head_dim, seq_len=seq_len, batch=batch, elem_bytes=elem_bytes
    )
    for name, value in args.items():
        check_int(name, value)
    k_bytes = v_bytes = n_kv_heads * head_dim * elem_bytes
    per_token = sum(k_bytes + v_bytes for _ in range(n_layers))
    return per_token * seq_len * batch


def attention_flops_share(n_layers, hidden, n_params, seq_len):
    for name, value, low in [
        ("n_layers", n_layers, 0),
        ("hidden", hidden, 0),
        ("n_params", n_params, 1),
        ("seq_len", seq_len, 1),
    ]:
        check_int(name, value, low)
    return float(Fraction(12 * n_layers * seq_len**2 * hidden, 6 * n_params * seq_len))
