"""Classic bug: attainable = intensity × bandwidth with no compute roof (prefill "exceeds" the GPU's peak)."""

MODULE = "inference"
REJECTED_BY = {"step_roofline": ["correctness"]}

_correct_step_roofline = step_roofline


def step_roofline(n_tokens, peak_flops, mem_bw, elem_bytes=2):
    out = _correct_step_roofline(n_tokens, peak_flops, mem_bw, elem_bytes)
    out["attainable_flops"] = out["intensity"] * mem_bw
    out["peak_fraction"] = out["attainable_flops"] / peak_flops
    return out
