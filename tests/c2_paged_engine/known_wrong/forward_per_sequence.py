"""Bug: one model.forward per scheduled sequence instead of one per step: correct tokens, no batching."""

MODULE = "engine"
REJECTED_BY = {"PagedEngine": ["efficiency"]}

_batched_forward = PagedEngine._forward


def _forward_each(self, scheduled):
    rows = [_batched_forward(self, {rid: n}) for rid, n in scheduled.items()]
    return torch.cat(rows)


PagedEngine._forward = _forward_each
