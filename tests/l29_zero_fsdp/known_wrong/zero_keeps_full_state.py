"""ZeRO in name only: every rank allocates m and v for ALL parameters (and updates only its slice of them).
The values are right; the memory is DDP's."""

MODULE = "sharded_adam"
REJECTED_BY = {"ShardedAdam": ["efficiency"]}

_RightShardedAdam = ShardedAdam


class ShardedAdam(_RightShardedAdam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, stage=1):
        super().__init__(params, lr, betas, eps, weight_decay, stage)
        full = self.world * self.shard
        self.full_exp_avg = torch.zeros(full, dtype=self.exp_avg.dtype)
        self.full_exp_avg_sq = torch.zeros(full, dtype=self.exp_avg.dtype)
        lo, hi = self.rank * self.shard, (self.rank + 1) * self.shard
        self.exp_avg, self.exp_avg_sq = self.full_exp_avg[lo:hi], self.full_exp_avg_sq[lo:hi]

    def state_bytes(self):
        return (self.full_exp_avg.numel() + self.full_exp_avg_sq.numel()) * self.full_exp_avg.element_size()
