"""Classic bug (lecture 28 §6.1 #02): the buckets are all-reduced in finish(), after the backward: no overlap."""

MODULE = "ddp"
REJECTED_BY = {"BucketedReducer": ["efficiency"]}


class BucketedReducer:
    def __init__(self, params, cap_bytes, first_cap_bytes=None):
        self.params = list(params)
        trainable = [i for i, p in enumerate(self.params) if p.requires_grad]
        sizes = [self.params[i].numel() * self.params[i].element_size() for i in trainable]
        self.buckets = [[trainable[j] for j in b] for b in assign_buckets(sizes, cap_bytes, first_cap_bytes)]
        self._syncing, self._ready = True, set()
        for i in trainable:
            self.params[i].register_post_accumulate_grad_hook(lambda p, i=i: self._ready.add(i))

    def finish(self):
        if not self._syncing:
            self._ready = set()
            return
        ready, self._ready = self._ready, set()
        missing = sorted(i for b in self.buckets for i in b if i not in ready)
        if missing:
            raise RuntimeError(f"no gradient for parameters {missing}")
        for bucket in self.buckets:
            flat = torch.cat([self.params[i].grad.reshape(-1) for i in bucket])
            dist.all_reduce(flat)
            flat.div_(dist.get_world_size())
            offset = 0
            for i in bucket:
                g = self.params[i].grad
                g.copy_(flat[offset:offset + g.numel()].view_as(g))
                offset += g.numel()

    @contextlib.contextmanager
    def no_sync(self):
        self._syncing = False
        try:
            yield
        finally:
            self._syncing = True
