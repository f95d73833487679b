"""Another correct memory_relation: intersect the two sets of byte addresses (O(numel · element_size) memory)."""

MODULE = "layout"
ACCEPTED = ["memory_relation"]


def memory_relation(a, b):
    for name, t in (("a", a), ("b", b)):
        if not isinstance(t, torch.Tensor):
            raise ValueError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if a.untyped_storage().data_ptr() != b.untyped_storage().data_ptr():
        return "distinct_storage"

    def covered(t):
        es = t.element_size()
        return {t.data_ptr() + es * sum(i * s for i, s in zip(idx, t.stride(), strict=True)) + byte
                for idx in product(*(range(n) for n in t.shape)) for byte in range(es)}

    return "overlap" if covered(a) & covered(b) else "shared_no_overlap"
