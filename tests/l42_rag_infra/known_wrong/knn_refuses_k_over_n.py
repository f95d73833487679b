"""Classic bug: k larger than the database is refused, where the contract returns every vector."""

MODULE = "rag"
REJECTED_BY = {"brute_force_knn": ["correctness"]}

_correct_brute_force_knn = brute_force_knn


def brute_force_knn(query, vectors, k):
    if isinstance(k, int) and isinstance(vectors, list | tuple) and k > len(vectors):
        raise ValueError(f"k = {k} exceeds the {len(vectors)} vectors")
    return _correct_brute_force_knn(query, vectors, k)
