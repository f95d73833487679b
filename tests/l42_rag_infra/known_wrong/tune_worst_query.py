"""Classic bug: every query must reach the target (the worst query's recall), not the mean over the queries."""

MODULE = "rag"
REJECTED_BY = {"tune_nprobe": ["correctness"]}


def tune_nprobe(index, queries, truth, target_recall):
    xq, k = _checked_tuning(index, queries, truth, target_recall)
    for p in range(1, index.nlist + 1):
        index.nprobe = p
        _, found = index.search(xq, k)
        recalls = [recall_at_k([int(i) for i in row if i >= 0], want) for row, want in zip(found, truth, strict=True)]
        if min(recalls) >= target_recall:
            return p
    return index.nlist
