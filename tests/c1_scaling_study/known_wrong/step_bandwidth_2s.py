"""Course shortcut taken literally (capstone §2.2, T_comm ≈ 2·S/B): every rank sends 2·S at any P, the N → ∞ limit
of the ring's 2(P − 1)/P · S; at P = 2 that doubles the bandwidth term."""

MODULE = "scaling"
REJECTED_BY = {"ddp_step_seconds": ["correctness"], "predicted_efficiency": ["correctness"]}


def ddp_step_seconds(world_size, t_compute_s, grad_bytes, alpha_s, bytes_per_s):
    p, g = check_int("world_size", world_size, 1), check_int("grad_bytes", grad_bytes)
    t_c, alpha = _check_real("t_compute_s", t_compute_s), _check_real("alpha_s", alpha_s)
    beta = _check_real("bytes_per_s", bytes_per_s, positive=True, allow_inf=True)
    if p == 1:
        return t_c
    return t_c + 2 * (p - 1) * alpha + 2 * g / beta
