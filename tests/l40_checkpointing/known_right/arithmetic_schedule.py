"""Correct alternatives: the run as committed progress plus arithmetic on the failure's offset; the save
through tempfile.mkstemp in path's directory and os.rename; Young/Daly written as a ratio."""

MODULE = "checkpoint"
ACCEPTED = ["checkpoint_efficiency", "optimal_interval", "simulate_run", "atomic_save"]

import tempfile


def checkpoint_efficiency(steps_between, step_s, save_s):
    check_int("steps_between", steps_between, 1)
    step_s, save_s = _check_real("step_s", step_s, positive=True), _check_real("save_s", save_s)
    return 1 / (1 + save_s / (steps_between * step_s))


def optimal_interval(ckpt_s, mtbf_s, method="young"):
    c, m = _check_real("ckpt_s", ckpt_s, positive=True), _check_real("mtbf_s", mtbf_s, positive=True)
    if method not in ("young", "daly"):
        raise ValueError(f"unknown method {method!r}")
    if method == "daly" and c >= 2 * m:
        return m
    x = math.sqrt(c / (2 * m))
    return 2 * m * x if method == "young" else 2 * m * x * (1 + x / 3 + x * x / 9) - c


def simulate_run(work_s, interval_s, ckpt_s, restart_s, failure_times):
    work, tau = _check_real("work_s", work_s, positive=True), _check_real("interval_s", interval_s, positive=True)
    c, r = _check_real("ckpt_s", ckpt_s), _check_real("restart_s", restart_s)
    failures = _check_failures(failure_times)
    n = math.ceil(work / tau)
    done, clock, lost, hits = 0, 0.0, 0.0, 0  # done = segments safely checkpointed
    for f in failures:
        f = max(f, clock)
        while done < n:
            length = min(tau, work - done * tau)
            cycle = length + (c if done < n - 1 else 0.0)
            if f < clock + cycle:
                break
            clock, done = clock + cycle, done + 1
        if done == n:
            break
        length = min(tau, work - done * tau)
        lost += min(f - clock, length)
        hits += 1
        clock = f + r
    for j in range(done, n):
        clock += min(tau, work - j * tau) + (c if j < n - 1 else 0.0)
    return {"wall_s": clock, "failures": hits, "lost_s": lost, "ckpts": n - 1}


def atomic_save(state, path):
    if not isinstance(state, dict):
        raise ValueError("state must be a dict")
    if not isinstance(path, str) or not path:
        raise ValueError("path must be a non-empty str")
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".ckpt-", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            torch.save(state, f)
            f.flush()
            os.fsync(f.fileno())
        os.rename(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    dfd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)
