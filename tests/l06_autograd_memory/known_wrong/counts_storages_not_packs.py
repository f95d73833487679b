"""count = distinct storages: x * x is reported as one saved tensor although autograd packs x twice."""

MODULE = "autograd_memory"
REJECTED_BY = {"saved_tensor_bytes": ["correctness"]}


def saved_tensor_bytes(fn, *args):
    if not callable(fn):
        raise ValueError(f"fn must be callable, got {fn!r}")
    saved = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t) or t, lambda t: t):
        fn(*args)
    unique = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in saved}
    return {"count": len(unique), "bytes": sum(t.numel() * t.element_size() for t in saved),
            "unique_bytes": sum(unique.values())}
