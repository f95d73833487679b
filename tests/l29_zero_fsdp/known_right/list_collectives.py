"""Correct alternative: the list forms of the collectives (reduce_scatter over P chunks, all_gather into a list)."""

MODULE = "sharded_adam"
ACCEPTED = ["ShardedAdam"]


class _ListCollectives:  # torch.distributed looked up at each call: the ranks wrap it after the fork
    @staticmethod
    def get_rank():
        return torch.distributed.get_rank()

    @staticmethod
    def get_world_size():
        return torch.distributed.get_world_size()

    @staticmethod
    def all_reduce(*args, **kwargs):
        return torch.distributed.all_reduce(*args, **kwargs)

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
        real, dist = dist, _ListCollectives()
        try:
            super().step()
        finally:
            dist = real
