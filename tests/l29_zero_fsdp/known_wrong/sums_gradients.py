"""Classic bug: the reduced gradient is the SUM over ranks, never divided by P (wrong moments, wrong steps)."""

MODULE = "sharded_adam"
REJECTED_BY = {"ShardedAdam": ["correctness"]}

_RightShardedAdam = ShardedAdam


class ShardedAdam(_RightShardedAdam):
    def step(self):
        self.step_count += 1
        padded = self.world * self.shard
        grads = [p.grad.reshape(-1) for p in self.params]
        flat_grad = torch.cat([*grads, grads[0].new_zeros(padded - self.numel)])
        lo, hi = self.rank * self.shard, (self.rank + 1) * self.shard
        if self.stage == 1:
            dist.all_reduce(flat_grad)
            unflatten_into(self.params, flat_grad, "grad")
            grad_shard = flat_grad[lo:hi]
        else:
            grad_shard = flat_grad.new_empty(self.shard)
            dist.reduce_scatter_single(grad_shard, flat_grad)
            for p in self.params:
                p.grad = None
        pad = flat_grad.new_zeros(padded - self.numel)
        flat_param = torch.cat([*(p.detach().reshape(-1) for p in self.params), pad])
        shard = flat_param[lo:hi].clone()
        adam_update_(shard, grad_shard, self.exp_avg, self.exp_avg_sq, self.step_count, self.lr, self.betas[0],
                     self.betas[1], self.eps, self.weight_decay)
        dist.all_gather_single(flat_param, shard)
        unflatten_into(self.params, flat_param, "data")
