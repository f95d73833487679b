"""Stage 2 in name only: the full gradient is all-reduced and then sliced (P× the gradient memory during the
reduce, and the all-reduce's second half is wasted): right values, no reduce-scatter."""

MODULE = "sharded_adam"
REJECTED_BY = {"ShardedAdam": ["efficiency"]}


class _AllReduceThenSlice:
    def __init__(self, real):  # torch.distributed's functions as the ranks wrapped them, read in step()
        self.get_rank, self.get_world_size, self.all_reduce, self.all_gather_single = (
            real.get_rank, real.get_world_size, real.all_reduce, real.all_gather_single)

    @staticmethod
    def reduce_scatter_single(output, input):
        full = input.clone()
        torch.distributed.all_reduce(full)
        r = torch.distributed.get_rank()
        output.copy_(full[r * output.numel():(r + 1) * output.numel()])


_RightShardedAdam = ShardedAdam


class ShardedAdam(_RightShardedAdam):
    def step(self):
        global dist
        real, dist = dist, _AllReduceThenSlice(dist)
        try:
            super().step()
        finally:
            dist = real
