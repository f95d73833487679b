"""Classic bug (passes lecture 28 lab 5.1's rank-vs-rank check): the gradients are summed over ranks, not averaged."""

MODULE = "ddp"
REJECTED_BY = {"BucketedReducer": ["correctness"]}

_RightReducer = BucketedReducer


class _Sum:  # finish() asks torch.distributed only for the world size
    @staticmethod
    def get_world_size():
        return 1


class BucketedReducer(_RightReducer):
    def finish(self):
        global dist
        real, dist = dist, _Sum()
        try:
            super().finish()
        finally:
            dist = real
