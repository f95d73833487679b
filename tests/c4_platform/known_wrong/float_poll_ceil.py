"""Detection as ceil(t / poll) · poll in floats: 2.1 / 0.3 = 7.000000000000001 waits one poll too many."""

import math

MODULE = "platform"
REJECTED_BY = {"self_heal": ["correctness"]}

_original = self_heal


def self_heal(events, n_spares, poll_s=POLL_S, swap_s=SWAP_S, restart_s=RESTART_S):
    got = _original(events, n_spares, poll_s, swap_s, restart_s)
    repairs = []
    for inc, (t, _, _) in zip(got["incidents"], events, strict=True):
        detect = math.ceil(t / poll_s) * poll_s
        if inc["recovered_s"] is not None:
            inc["recovered_s"] += detect - inc["detected_s"]
            repairs.append(inc["recovered_s"] - t)
        inc["detected_s"] = detect
    got["mttr_s"] = sum(repairs) / len(repairs) if repairs else None
    return got
