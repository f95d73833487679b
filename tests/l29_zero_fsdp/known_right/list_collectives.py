"""Correct alternative: the list forms of the collectives (reduce_scatter over P chunks, all_gather into a list)."""

MODULE = "sharded_adam"
ACCEPTED = ["ShardedAdam"]


class _ListCollectives:
    def __init__(self, real):  # torch.distributed's functions as the ranks wrapped them, read in step()
        self.get_rank, self.get_world_size, self.all_reduce = (
            real.get_rank, real.get_world_size, real.all_reduce)

    @staticmethod
    def reduce_scatter_single(output, input):
        torch.distributed.reduce_scatter(output, list(input.chunk(torch.distributed.get_world_size())))

    @staticmethod
    def all_gather_single(output, input):
        parts = [torch.empty_like(input) for _ in range(torch.distributed.get_world_size())]
        torch.distributed.all_gather(parts, input)
        output.copy_(torch.cat(parts))


_RightShardedAdam = ShardedAdam


class ShardedAdam(_RightShardedAdam):
    def step(self):
        global dist
        real, dist = dist, _ListCollectives(dist)
        try:
            super().step()
        finally:
            dist = real
