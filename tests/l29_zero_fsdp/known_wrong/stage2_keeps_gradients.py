"""Stage 2 that runs stage 1: the full gradient all-reduced and written back into every p.grad (not sharded)."""

MODULE = "sharded_adam"
REJECTED_BY = {"ShardedAdam": ["correctness", "efficiency"]}

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
