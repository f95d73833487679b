"""The call site taken as the frame right after the collective: torch's own c10d_logger wrapper."""

MODULE = "interview"
REJECTED_BY = {"hang_call_site": ["correctness"]}

_correct_hang_call_site = hang_call_site


def hang_call_site(frames):
    got = _correct_hang_call_site(frames)
    for i, (function, _, _) in enumerate(frames):
        if function == got["collective"] and i + 1 < len(frames):
            return {"collective": got["collective"], "site": f"{frames[i + 1][1]}:{frames[i + 1][2]}"}
    return got
