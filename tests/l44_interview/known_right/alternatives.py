"""Correct alternatives: the plan as a table of sharded terms, exact-fraction step arithmetic, triage with Counter."""

from collections import Counter
from fractions import Fraction

MODULE = "interview"
ACCEPTED = ["plan_static_bytes", "training_run", "triage_hang"]

_SHARDED_FROM = {"weights": 3, "grads": 2, "optimizer": 1}


def plan_static_bytes(n_params, tp, pp, dp, zero_stage, weight_bytes=2, grad_bytes=2, optimizer_bytes=12):
    n = check_int("n_params", n_params)
    tp, pp, dp = check_int("tp", tp, 1), check_int("pp", pp, 1), check_int("dp", dp, 1)
    stage = _check_stage(zero_stage)
    size = {"weights": check_int("weight_bytes", weight_bytes), "grads": check_int("grad_bytes", grad_bytes),
            "optimizer": check_int("optimizer_bytes", optimizer_bytes)}
    local = (n + tp * pp - 1) // (tp * pp)
    held = {t: (local + dp - 1) // dp if stage >= s else local for t, s in _SHARDED_FROM.items()}
    out = {t: held[t] * size[t] for t in ("weights", "grads", "optimizer")}
    out["total"] = out["weights"] + out["grads"] + out["optimizer"]
    return out


def training_run(n_params, tokens_per_step, total_tokens, n_gpus, mfu, peak_flops=H100.bf16_flops, gpus_per_node=8,
                 node_hour_price=180.0):
    n, tokens = check_int("n_params", n_params), check_int("tokens_per_step", tokens_per_step, 1)
    total, gpus = check_int("total_tokens", total_tokens), check_int("n_gpus", n_gpus, 1)
    mfu, peak = _check_real("mfu", mfu, 0.0, 1.0), _check_real("peak_flops", peak_flops, 0.0)
    per_node = check_int("gpus_per_node", gpus_per_node, 1)
    price = _check_real("node_hour_price", node_hour_price, 0.0, low_open=False)
    flops = 6 * n * tokens
    step = Fraction(flops) / (gpus * Fraction(peak) * Fraction(mfu))
    steps = total // tokens + (total % tokens > 0)
    days = steps * step / 86_400
    nodes = gpus // per_node + (gpus % per_node > 0)
    return {"flops_per_step": flops, "step_s": float(step), "steps": steps, "days": float(days),
            "cost": float(days * 24 * nodes * Fraction(price))}


def triage_hang(dumps):
    if not isinstance(dumps, dict) or not dumps:
        raise ValueError("dumps must be a non-empty dict {rank: py-spy dump}")
    where = {}
    for rank in dumps:
        check_int("dumps (a rank)", rank)
    for rank in sorted(dumps):
        site = hang_call_site(main_thread_stack(_check_dump(f"dumps[{rank}]", dumps[rank])))
        where[rank] = None if site["collective"] is None else f"{site['collective']} {site['site']}"
    counts = Counter(s for s in where.values() if s is not None)
    if not counts:
        return {"verdict": "no_collective", "suspects": [], "sites": {}}
    top = max(counts.values())
    main = next(s for r, s in sorted(where.items()) if s is not None and counts[s] == top)
    sites = {}
    for rank, s in sorted(where.items()):
        if s is not None:
            sites.setdefault(s, []).append(rank)
    idle = [r for r, s in where.items() if s is None]
    verdict = "divergence" if len(counts) > 1 else ("straggler" if idle else "straggler_or_network")
    return {"verdict": verdict, "suspects": sorted(r for r, s in where.items() if s != main), "sites": sites}
