"""A tie for the largest group goes to the highest rank's site."""

MODULE = "interview"
REJECTED_BY = {"triage_hang": ["correctness"]}

_correct_triage_hang = triage_hang


def triage_hang(dumps):
    got = _correct_triage_hang(dumps)
    sites = got["sites"]
    if len(sites) > 1:
        main = max(sites.values(), key=lambda ranks: (len(ranks), ranks[0]))
        got["suspects"] = sorted(r for r in dumps if r not in main)
    return got
