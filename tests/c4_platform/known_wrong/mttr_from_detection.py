"""MTTR measured from detection instead of from the fault: the time the fault went unseen is not counted."""

MODULE = "platform"
REJECTED_BY = {"self_heal": ["correctness"]}

_original = self_heal


def self_heal(events, n_spares, poll_s=POLL_S, swap_s=SWAP_S, restart_s=RESTART_S):
    got = _original(events, n_spares, poll_s, swap_s, restart_s)
    repairs = [i["recovered_s"] - i["detected_s"] for i in got["incidents"] if i["recovered_s"] is not None]
    got["mttr_s"] = sum(repairs) / len(repairs) if repairs else None
    return got
