"""Classic bug: intensity = token count whatever the weight precision (bf16 assumed; fp8 halves the bytes)."""

MODULE = "inference"
REJECTED_BY = {"step_roofline": ["correctness"]}

_correct_step_roofline = step_roofline


def step_roofline(n_tokens, peak_flops, mem_bw, elem_bytes=2):
    _correct_step_roofline(n_tokens, peak_flops, mem_bw, elem_bytes)
    return _correct_step_roofline(n_tokens, peak_flops, mem_bw, 2)
