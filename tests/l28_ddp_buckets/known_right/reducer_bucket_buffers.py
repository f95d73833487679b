"""Correct alternative: one flat buffer per bucket allocated up front; each hook copies its gradient into its slice
and the completed buffers are all-reduced in place, in bucket order, by a launch pointer."""

MODULE = "ddp"
ACCEPTED = ["BucketedReducer"]


class BucketedReducer:
    def __init__(self, params, cap_bytes, first_cap_bytes=None):
        self.params = list(params)
        trainable = [i for i, p in enumerate(self.params) if p.requires_grad]
        sizes = [self.params[i].numel() * self.params[i].element_size() for i in trainable]
        self.buckets = [[trainable[j] for j in b] for b in assign_buckets(sizes, cap_bytes, first_cap_bytes)]
        self._slot = {}
        self._buffers = []
        for b, bucket in enumerate(self.buckets):
            offset = 0
            for i in bucket:
                self._slot[i] = (b, offset, self.params[i].numel())
                offset += self.params[i].numel()
            dtype = self.params[bucket[0]].dtype
            self._buffers.append(torch.empty(offset, dtype=dtype))
        self._pending = [len(b) for b in self.buckets]
        self._next, self._works, self._off, self._arrived = 0, [], False, set()
        for i in trainable:
            self.params[i].register_post_accumulate_grad_hook(self._hook(i))

    def _hook(self, index):
        def hook(param):
            if self._off:
                return
            b, offset, n = self._slot[index]
            self._arrived.add(index)
            self._buffers[b][offset:offset + n].copy_(param.grad.reshape(-1))
            self._pending[b] -= 1
            while self._next < len(self.buckets) and self._pending[self._next] == 0:
                self._works.append(dist.all_reduce(self._buffers[self._next], async_op=True))
                self._next += 1
        return hook

    def finish(self):
        if self._off:
            return
        arrived, works = self._arrived, self._works
        self._pending, self._next, self._works, self._arrived = [len(b) for b in self.buckets], 0, [], set()
        missing = sorted(set(self._slot) - arrived)
        if missing:
            raise RuntimeError(f"finish(): parameters {missing} got no gradient in this backward")
        for b, work in enumerate(works):
            work.wait()
            self._buffers[b].div_(dist.get_world_size())
            for i in self.buckets[b]:
                _, offset, n = self._slot[i]
                self.params[i].grad.copy_(self._buffers[b][offset:offset + n].view_as(self.params[i].grad))

    @contextlib.contextmanager
    def no_sync(self):
        self._off = True
        try:
            yield
        finally:
            self._off = False
