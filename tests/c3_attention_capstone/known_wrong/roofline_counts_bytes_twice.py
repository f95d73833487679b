"""The lab-1 analyzer's double count: 8N² + 8Nd are already fp16 bytes, multiplied by 2 bytes again."""

MODULE = "capstone"
REJECTED_BY = {"attention_roofline": ["correctness"]}


def attention_roofline(n, d, peak_flops, hbm_bytes_per_s, elem_bytes=2):
    flops = 4 * n * n * d
    ideal = 4 * n * d * elem_bytes
    naive = (8 * n * n + 8 * n * d) * elem_bytes  # the course's 8*n*d*2 + 8*n**2*2
    t_compute = flops / peak_flops
    return {"flops": flops, "naive_bytes": naive, "ideal_bytes": ideal, "ai_naive": flops / naive,
            "ai_ideal": flops / ideal, "ai_limit": d / elem_bytes, "ridge": peak_flops / hbm_bytes_per_s,
            "memory_bound": flops / naive < peak_flops / hbm_bytes_per_s, "t_compute_s": t_compute,
            "t_naive_s": max(t_compute, naive / hbm_bytes_per_s), "t_ideal_s": max(t_compute, ideal / hbm_bytes_per_s)}
