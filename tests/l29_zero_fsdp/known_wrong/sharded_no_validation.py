"""No argument checks: rank beyond the world, step 0, stage 3, frozen parameters go through."""

MODULE = "sharded_adam"
REJECTED_BY = {"shard_range": ["correctness"], "adam_update_": ["correctness"], "ShardedAdam": ["correctness"]}


def check_int(name, value, minimum=0):
    return value


def _check_rate(name, value, *, below_one=False):
    return value


_RightShardedAdam = ShardedAdam


class ShardedAdam(_RightShardedAdam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, stage=1):
        params = list(params)
        try:
            super().__init__(params, lr, betas, eps, weight_decay, 1 if stage not in (1, 2) else stage)
        except ValueError:
            self.params = params


def shard_range(numel, world_size, rank):
    size = -(-numel // world_size) if world_size else 0
    return min(rank * size, numel), min((rank + 1) * size, numel)
