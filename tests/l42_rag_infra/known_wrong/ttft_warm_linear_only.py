"""The lecture's evaluation: the warm prefill counts 2·Φ·S_query only, dropping the query's attention to the context."""

MODULE = "rag"
REJECTED_BY = {"context_cache_ttft": ["correctness"]}

_correct_context_cache_ttft = context_cache_ttft


def context_cache_ttft(params, s_ctx, s_query, flops_per_s, n_layers=0, d_attn=0):
    out = _correct_context_cache_ttft(params, s_ctx, s_query, flops_per_s, n_layers, d_attn)
    warm = 2 * params * s_query
    out.update(warm_flops=warm, warm_ttft_s=warm / flops_per_s, speedup=out["cold_flops"] / warm,
               saved_fraction=1 - warm / out["cold_flops"])
    return out
