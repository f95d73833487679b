"""Classic bug (lecture 28 §0.2): finish() says nothing when a parameter's gradient never arrived; its bucket is
silently never reduced and the ranks drift apart (or, on NCCL, hang on the next step)."""

MODULE = "ddp"
REJECTED_BY = {"BucketedReducer": ["correctness"]}

_RightReducer = BucketedReducer


class BucketedReducer(_RightReducer):
    def finish(self):
        if not self._syncing:
            return
        launched, self._ready, self._launched = self._launched, set(), []
        world = dist.get_world_size()
        for (work, flat), bucket in zip(launched, self.buckets, strict=False):
            work.wait()
            flat.div_(world)
            offset = 0
            for i in bucket:
                grad = self.params[i].grad
                grad.copy_(flat[offset:offset + grad.numel()].view_as(grad))
                offset += grad.numel()
