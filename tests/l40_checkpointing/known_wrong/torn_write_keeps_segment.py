"""A failure during a write loses only the write: the segment is treated as if its checkpoint had landed."""

MODULE = "checkpoint"
REJECTED_BY = {"simulate_run": ["correctness"]}


def simulate_run(work_s, interval_s, ckpt_s, restart_s, failure_times):
    work, interval = _check_real("work_s", work_s, positive=True), _check_real("interval_s", interval_s, positive=True)
    ckpt, restart = _check_real("ckpt_s", ckpt_s), _check_real("restart_s", restart_s)
    pending = _check_failures(failure_times)
    n = math.ceil(work / interval)
    now = lost = 0.0
    failures = ckpts = k = 0
    while k < n:
        compute_end = now + min(interval, work - k * interval)
        end = compute_end + (ckpt if k < n - 1 else 0.0)
        if pending and max(pending[0], now) < end:
            hit = max(pending.pop(0), now)
            failures += 1
            if hit >= compute_end:  # wrong: the torn write's segment counted as saved
                now, k = hit + restart, k + 1
                continue
            lost += hit - now
            now = hit + restart
            continue
        now, ckpts, k = end, ckpts + (k < n - 1), k + 1
    return {"wall_s": now, "failures": failures, "lost_s": lost, "ckpts": ckpts}
