"""Every hardware fault is "replaced", even with the spare pool empty (spares_left goes negative)."""

MODULE = "platform"
REJECTED_BY = {"self_heal": ["correctness"]}

_original = self_heal


def self_heal(events, n_spares, poll_s=POLL_S, swap_s=SWAP_S, restart_s=RESTART_S):
    got = _original(events, n_spares + len(events), poll_s, swap_s, restart_s)
    got["spares_left"] -= len(events)
    return got
