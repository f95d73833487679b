"""Classic bug: n(n+1)/2 with a true division: the FLOP counts become floats (inexact past 2**53)."""

MODULE = "rag"
REJECTED_BY = {"context_cache_ttft": ["correctness"]}

_correct_context_cache_ttft = context_cache_ttft


def context_cache_ttft(params, s_ctx, s_query, flops_per_s, n_layers=0, d_attn=0):
    _correct_context_cache_ttft(params, s_ctx, s_query, flops_per_s, n_layers, d_attn)
    s = s_ctx + s_query
    cold = 2 * params * s + 4 * n_layers * d_attn * (s * (s + 1) / 2)
    warm = 2 * params * s_query + 4 * n_layers * d_attn * (s_query * s_ctx + s_query * (s_query + 1) / 2)
    return {"cold_flops": cold, "warm_flops": warm, "cold_ttft_s": cold / flops_per_s,
            "warm_ttft_s": warm / flops_per_s, "speedup": cold / warm, "saved_fraction": 1 - warm / cold}
