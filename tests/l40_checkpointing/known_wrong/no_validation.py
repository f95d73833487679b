"""No argument checks: zero ranks, NaN times and unknown methods come back as numbers (or crash oddly)."""

MODULE = "checkpoint"
REJECTED_BY = {
    "checkpoint_efficiency": ["correctness"],
    "async_stage_seconds": ["correctness"],
    "optimal_interval": ["correctness"],
    "simulate_run": ["correctness"],
    "atomic_save": ["correctness"],
}

_run, _save = simulate_run, atomic_save
_check_real = lambda name, value, positive=False: float(value)
check_int = lambda name, value, minimum=0: value


def checkpoint_efficiency(steps_between, step_s, save_s):
    return steps_between * step_s / (steps_between * step_s + save_s)


def async_stage_seconds(state_bytes, n_ranks, d2h_bytes_per_s):
    return state_bytes / max(n_ranks, 1) / (d2h_bytes_per_s or 1.0)


def optimal_interval(ckpt_s, mtbf_s, method="young"):
    young = math.sqrt(abs(2 * ckpt_s * mtbf_s))
    if method != "daly" or ckpt_s >= 2 * mtbf_s:
        return young if method != "daly" else mtbf_s
    r = ckpt_s / (2 * mtbf_s)
    return young * (1 + math.sqrt(r) / 3 + r / 9) - ckpt_s


def _check_failures(failure_times):
    return sorted(float(t) for t in failure_times)


def atomic_save(state, path):
    if isinstance(path, str) and path:
        return _save(dict(state), path)
    return None
