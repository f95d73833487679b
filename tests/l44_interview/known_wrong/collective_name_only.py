"""Groups ranks by the collective's name alone: all_reduce for eval and all_reduce for gradients look alike."""

MODULE = "interview"
REJECTED_BY = {"triage_hang": ["correctness"]}

_correct_hang_call_site = hang_call_site


def hang_call_site(frames):
    got = _correct_hang_call_site(frames)
    return {**got, "site": "*"} if got["collective"] else got
