"""Classic bug (lecture 28 §7.2 #10): no_sync only skips writing the result back; every micro-batch still
all-reduces its buckets (k times the traffic of one step)."""

MODULE = "ddp"
REJECTED_BY = {"BucketedReducer": ["efficiency"]}

_RightReducer = BucketedReducer


class BucketedReducer(_RightReducer):
    def __init__(self, params, cap_bytes, first_cap_bytes=None):
        super().__init__(params, cap_bytes, first_cap_bytes)
        self._skip_write = False

    def finish(self):
        if not self._skip_write:
            return super().finish()
        launched, self._ready, self._launched = self._launched, set(), []
        for work, _ in launched:
            work.wait()  # reduced, then thrown away

    @contextlib.contextmanager
    def no_sync(self):
        self._skip_write = True
        try:
            yield
        finally:
            self._skip_write = False
