"""Classic bug: every step feeds each sequence's whole known context again (re-prefill) instead of its new tokens."""

MODULE = "engine"
REJECTED_BY = {"PagedEngine": ["correctness", "efficiency"]}

_batched_forward = PagedEngine._forward


def _forward_from_zero(self, scheduled):
    logits, rows = [], []
    for rid, n in scheduled.items():
        r = self.requests[rid]
        start = r.computed
        r.computed = 0
        self._grow(rid, start + n)
        try:
            out = _batched_forward(self, {rid: start + n})
        finally:
            r.computed = start
        logits.append(out[start:])
        rows.append(start + n)
    return torch.cat(logits)


PagedEngine._forward = _forward_from_zero
