"""Each saved tensor charged its whole storage's nbytes(): a slice is charged the tensor it was cut from."""

MODULE = "autograd_memory"
REJECTED_BY = {"saved_tensor_bytes": ["correctness"]}


def saved_tensor_bytes(fn, *args):
    if not callable(fn):
        raise ValueError(f"fn must be callable, got {fn!r}")
    saved = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t) or t, lambda t: t):
        fn(*args)
    unique = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in saved}
    return {"count": len(saved), "bytes": sum(t.untyped_storage().nbytes() for t in saved),
            "unique_bytes": sum(unique.values())}
