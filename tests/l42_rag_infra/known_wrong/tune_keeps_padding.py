"""Classic bug: faiss's -1 padding left in the rows: recall_at_k refuses a row with -1 twice (short lists)."""

MODULE = "rag"
REJECTED_BY = {"tune_nprobe": ["correctness"]}


def tune_nprobe(index, queries, truth, target_recall):
    xq, k = _checked_tuning(index, queries, truth, target_recall)
    for p in range(1, index.nlist + 1):
        index.nprobe = p
        _, found = index.search(xq, k)
        recalls = [recall_at_k([int(i) for i in row], want) for row, want in zip(found, truth, strict=True)]
        if sum(recalls) / len(recalls) >= target_recall:
            return p
    raise ValueError(f"target_recall {target_recall} is not reached")
