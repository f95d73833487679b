"""Every saved element taken as 4 bytes (fp32): the bool dropout mask and fp16/fp64 tensors come out wrong."""

MODULE = "autograd_memory"
REJECTED_BY = {"saved_tensor_bytes": ["correctness"]}


def saved_tensor_bytes(fn, *args):
    if not callable(fn):
        raise ValueError(f"fn must be callable, got {fn!r}")
    saved = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t) or t, lambda t: t):
        fn(*args)
    unique = {t.untyped_storage().data_ptr(): t.untyped_storage().size() // t.element_size() * 4 for t in saved}
    return {"count": len(saved), "bytes": sum(4 * t.numel() for t in saved), "unique_bytes": sum(unique.values())}
