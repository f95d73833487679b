"""No polling: a fault is acted on the instant it happens, so the 500 ms detection delay vanishes."""

MODULE = "platform"
REJECTED_BY = {"self_heal": ["correctness"]}

_original = self_heal


def self_heal(events, n_spares, poll_s=POLL_S, swap_s=SWAP_S, restart_s=RESTART_S):
    got = _original(events, n_spares, poll_s, swap_s, restart_s)
    repairs = []
    for inc, (t, _, _) in zip(got["incidents"], events, strict=True):
        if inc["recovered_s"] is not None:
            inc["recovered_s"] -= inc["detected_s"] - t
            repairs.append(inc["recovered_s"] - t)
        inc["detected_s"] = float(t)
    got["mttr_s"] = sum(repairs) / len(repairs) if repairs else None
    return got
