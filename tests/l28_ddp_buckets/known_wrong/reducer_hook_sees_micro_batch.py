"""Classic bug: a tensor hook (Parameter.register_hook, lecture 28 §2.2's picture) copies the incoming gradient of
the last micro-batch; what no_sync accumulated in .grad before it is overwritten by the average of that one alone."""

MODULE = "ddp"
REJECTED_BY = {"BucketedReducer": ["correctness"]}


class BucketedReducer:
    def __init__(self, params, cap_bytes, first_cap_bytes=None):
        self.params = list(params)
        trainable = [i for i, p in enumerate(self.params) if p.requires_grad]
        sizes = [self.params[i].numel() * self.params[i].element_size() for i in trainable]
        self.buckets = [[trainable[j] for j in b] for b in assign_buckets(sizes, cap_bytes, first_cap_bytes)]
        self._syncing, self._grads, self._launched = True, {}, []
        for i in trainable:
            self.params[i].register_hook(self._hook(i))

    def _hook(self, index):
        def hook(grad):
            if self._syncing:
                self._grads[index] = grad.detach().clone()
                while len(self._launched) < len(self.buckets) and all(
                        i in self._grads for i in self.buckets[len(self._launched)]):
                    bucket = self.buckets[len(self._launched)]
                    flat = torch.cat([self._grads[i].reshape(-1) for i in bucket])
                    self._launched.append((dist.all_reduce(flat, async_op=True), flat))
            return grad
        return hook

    def finish(self):
        if not self._syncing:
            return
        launched, grads, self._launched, self._grads = self._launched, self._grads, [], {}
        missing = sorted(i for b in self.buckets for i in b if i not in grads)
        if missing:
            raise RuntimeError(f"no gradient for parameters {missing}")
        for (work, flat), bucket in zip(launched, self.buckets, strict=False):
            work.wait()
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
