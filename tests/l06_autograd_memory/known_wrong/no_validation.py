"""No argument checks: the right values for valid input, but bad sizes, fn or segments are not refused."""

MODULE = "autograd_memory"
REJECTED_BY = {
    "attention_saved_bytes": ["correctness"],
    "saved_tensor_bytes": ["correctness"],
    "checkpoint_plan": ["correctness"],
    "checkpointed_forward": ["correctness"],
}


def attention_saved_bytes(batch, n_heads, seq, head_dim, elem_bytes=2, dropout=True, mask_bytes=1):
    qkv, scores = batch * n_heads * seq * head_dim * elem_bytes, batch * n_heads * seq * seq
    parts = {"q": qkv, "k": qkv, "softmax_out": scores * elem_bytes,
             "dropout_mask": scores * mask_bytes if dropout else 0,
             "dropout_out": scores * elem_bytes if dropout else 0, "v": qkv}
    parts["total"] = sum(parts.values())
    return parts


def saved_tensor_bytes(fn, *args):
    saved = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t) or t, lambda t: t):
        fn(*args)
    unique = {t.untyped_storage().data_ptr(): t.untyped_storage().nbytes() for t in saved}
    return {"count": len(saved), "bytes": sum(t.numel() * t.element_size() for t in saved),
            "unique_bytes": sum(unique.values())}


def checkpoint_plan(n_layers, act_bytes_per_layer, input_bytes_per_layer):
    n, act, inp = int(n_layers), act_bytes_per_layer, input_bytes_per_layer
    peak, k = min(((k * inp + -(-n // k) * act, k) for k in range(1, n + 1)), default=(0, 1))
    return {"segments": k, "peak_bytes": peak, "no_ckpt_bytes": n * act, "recompute_flops_pct": 33}


def checkpointed_forward(blocks, x, segments):
    blocks, start = list(blocks), 0
    for size in split_sizes(len(blocks), segments):
        if size:
            x = checkpoint(_run_blocks(blocks[start:start + size]), x, use_reentrant=False)
        start += size
    return x
