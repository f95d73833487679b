"""Classic bug: ties broken by the document's name (sorted by (-score, doc)), not by first appearance."""

MODULE = "rag"
REJECTED_BY = {"rrf_fuse": ["correctness"]}

_correct_rrf_fuse = rrf_fuse


def rrf_fuse(rankings, k=60):
    return sorted(_correct_rrf_fuse(rankings, k), key=lambda item: (-item[1], str(item[0])))
