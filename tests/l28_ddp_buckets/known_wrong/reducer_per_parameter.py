"""Lecture 19 §2.1's "latency hell": one all-reduce per parameter, launched from its hook. Right values, no buckets."""

MODULE = "ddp"
REJECTED_BY = {"BucketedReducer": ["efficiency"]}


class BucketedReducer:
    def __init__(self, params, cap_bytes, first_cap_bytes=None):
        self.params = list(params)
        trainable = [i for i, p in enumerate(self.params) if p.requires_grad]
        sizes = [self.params[i].numel() * self.params[i].element_size() for i in trainable]
        self.buckets = [[trainable[j] for j in b] for b in assign_buckets(sizes, cap_bytes, first_cap_bytes)]
        self._syncing, self._works = True, {}
        for i in trainable:
            self.params[i].register_post_accumulate_grad_hook(self._hook(i))

    def _hook(self, index):
        def hook(param):
            if self._syncing:
                self._works[index] = dist.all_reduce(param.grad, async_op=True)
        return hook

    def finish(self):
        if not self._syncing:
            return
        works, self._works = self._works, {}
        missing = sorted(i for b in self.buckets for i in b if i not in works)
        if missing:
            raise RuntimeError(f"no gradient for parameters {missing}")
        for i, work in works.items():
            work.wait()
            self.params[i].grad.div_(dist.get_world_size())

    @contextlib.contextmanager
    def no_sync(self):
        self._syncing = False
        try:
            yield
        finally:
            self._syncing = True
