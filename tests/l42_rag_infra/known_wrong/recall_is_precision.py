"""Classic bug: divides by len(found) (precision) instead of len(truth) (recall)."""

MODULE = "rag"
REJECTED_BY = {"recall_at_k": ["correctness"]}

_correct_recall_at_k = recall_at_k


def recall_at_k(found, truth):
    _correct_recall_at_k(found, truth)
    return len(set(found) & set(truth)) / len(found) if len(found) else 0.0
