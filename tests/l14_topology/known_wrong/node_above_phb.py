"""NODE ranked above PHB (the lecture's "NODE/PHB" read as NODE first); the legend puts PHB closer."""

MODULE = "topology"
REJECTED_BY = {"link_rank": ["correctness"], "best_gpu_set": ["correctness"]}

_right_rank = link_rank


def link_rank(code):
    return {"PHB": 2, "NODE": 3}.get(code) or _right_rank(code)
