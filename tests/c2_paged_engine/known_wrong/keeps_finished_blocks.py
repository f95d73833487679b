"""Classic bug: a finished request leaves the batch but its blocks are never returned to the pool."""

MODULE = "engine"
REJECTED_BY = {"PagedEngine": ["correctness", "efficiency"]}

_correct_release = PagedEngine._release


def _release_unless_finished(self, rid):
    r = self.requests[rid]
    if len(r.generated) == r.max_new:
        self.running.remove(rid)  # its table stays allocated
    else:
        _correct_release(self, rid)


PagedEngine._release = _release_unless_finished
