"""Every NVLink bond ranked the same (NV# → 100): NV18 and NV2 look alike."""

MODULE = "topology"
REJECTED_BY = {"link_rank": ["correctness"], "best_gpu_set": ["correctness"]}

_right_rank = link_rank


def link_rank(code):
    return 100 if isinstance(code, str) and re.fullmatch(r"NV\d+", code) else _right_rank(code)
