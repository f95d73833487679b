"""Classic bug: off by one: returns the last nprobe that still misses the target (p − 1), never less than 1."""

MODULE = "rag"
REJECTED_BY = {"tune_nprobe": ["correctness"]}

_correct_tune_nprobe = tune_nprobe


def tune_nprobe(index, queries, truth, target_recall):
    return max(1, _correct_tune_nprobe(index, queries, truth, target_recall) - 1)
