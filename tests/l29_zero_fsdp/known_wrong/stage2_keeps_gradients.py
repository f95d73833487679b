"""Stage 2 that still writes the full averaged gradient back into every p.grad: the gradients are not sharded."""

MODULE = "sharded_adam"
REJECTED_BY = {"ShardedAdam": ["correctness"]}

_RightShardedAdam = ShardedAdam


class ShardedAdam(_RightShardedAdam):
    def step(self):
        if self.stage == 2:
            self.stage = 1
            try:
                super().step()
            finally:
                self.stage = 2
        else:
            super().step()
