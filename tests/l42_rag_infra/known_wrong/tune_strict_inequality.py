"""Classic bug: recall > target instead of ≥: a target met exactly at nprobe = p is reported at a larger nprobe."""

MODULE = "rag"
REJECTED_BY = {"tune_nprobe": ["correctness"]}


def tune_nprobe(index, queries, truth, target_recall):
    xq, k = _checked_tuning(index, queries, truth, target_recall)
    for p in range(1, index.nlist + 1):
        index.nprobe = p
        _, found = index.search(xq, k)
        recalls = [recall_at_k([int(i) for i in row if i >= 0], want) for row, want in zip(found, truth, strict=True)]
        if sum(recalls) / len(recalls) > target_recall or p == index.nlist:
            return p
    return index.nlist
