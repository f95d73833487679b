"""Classic bug: no argument checks; bad counts, windows, snapshots, ps listings and lines are answered."""

MODULE = "linux_tools"
REJECTED_BY = {
    "loadavg_ema": ["correctness"],
    "kernel_loadavg": ["correctness"],
    "cpu_breakdown": ["correctness"],
    "ps_states": ["correctness"],
    "use_triage": ["correctness"],
    "fold_stacks": ["correctness"],
}

_correct = {"ema": loadavg_ema, "kernel": kernel_loadavg, "stat": cpu_breakdown, "ps": ps_states,
            "triage": use_triage, "fold": fold_stacks}


def _quiet(fn, default):
    def wrapped(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except Exception:
            return default
    return wrapped


loadavg_ema = _quiet(_correct["ema"], 0.0)
kernel_loadavg = _quiet(_correct["kernel"], "0.00")
cpu_breakdown = _quiet(_correct["stat"], {})
ps_states = _quiet(_correct["ps"], {"states": {}, "total": 0, "d_wchan": {}})
use_triage = _quiet(_correct["triage"], {"verdict": "ok"})
fold_stacks = _quiet(_correct["fold"], {})
