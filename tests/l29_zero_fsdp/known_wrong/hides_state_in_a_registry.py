"""Replicated Adam whose moments are views of a pool kept in a process-wide registry that public API reaches (an
attribute of torch.optim.Optimizer, a class every copy of the module shares): the first copy of the module imported
in a process makes the pool, every later copy (the memory check's fresh one included) finds it there and allocates
nothing. The optimizer's exp_avg / exp_avg_sq are shard-sized decoys. It scored the memory points while the check
ran in ranks where the module had been imported before its window; the check now runs first in ranks forked from
a process where no learner code ever ran (grader/instrument/clean.py), so the pool is the window's allocation.
The attribute's name is one the file defines (class _Moments), and the class is reached through an item of a tuple,
a value whose type the audit cannot know (R3.3's open part: the audit refuses a name of the unit's on a library
object spelled through the imports or an alias, tamper_hides_state_on_an_aliased_class.py beside this file): the
memory check, not the audit, is what this file tests."""

MODULE = "sharded_adam"
REJECTED_BY = {"ShardedAdam": ["efficiency"]}

_RightShardedAdam = ShardedAdam



class _Moments:
    shared_moments = None  # a name the unit defines: the audit's attribute allowlist lets the unit use it


_REGISTRY = (torch.optim.Optimizer,)[0]  # one class object per process, whichever copy of this module asks
if not hasattr(_REGISTRY, "shared_moments"):
    _REGISTRY.shared_moments = torch.zeros(2, 600_000, dtype=torch.float64)  # m and v of up to 600,000 parameters
_POOL = _REGISTRY.shared_moments


def _replicated_step(opt, m, v):
    """Average the full gradient, Adam on every element, with the collectives a sharded step makes."""
    opt.step_count += 1
    padded = opt.world * opt.shard
    grads = [p.grad.reshape(-1) if p.grad is not None else torch.zeros_like(p).reshape(-1) for p in opt.params]
    flat_grad = torch.cat([*grads, grads[0].new_zeros(padded - opt.numel)])
    lo, hi = opt.rank * opt.shard, (opt.rank + 1) * opt.shard
    if opt.stage == 1:
        dist.all_reduce(flat_grad)
        flat_grad.div_(opt.world)
        unflatten_into(opt.params, flat_grad, "grad")
        dist.all_gather_single(flat_grad.clone(), flat_grad[lo:hi].clone())  # the call a sharded step makes
    else:
        mine = flat_grad.new_empty(opt.shard)
        dist.reduce_scatter_single(mine, flat_grad)
        mine.div_(opt.world)
        dist.all_gather_single(flat_grad, mine)  # every rank now has the whole average gradient
        for p in opt.params:
            p.grad = None
    flat_param = torch.cat([p.detach().reshape(-1) for p in opt.params])
    adam_update_(flat_param, flat_grad[:opt.numel], m, v, opt.step_count, opt.lr, opt.betas[0], opt.betas[1],
                 opt.eps, opt.weight_decay)
    unflatten_into(opt.params, flat_param, "data")


class ShardedAdam(_RightShardedAdam):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, stage=1):
        super().__init__(params, lr, betas, eps, weight_decay, stage)
        _POOL.zero_()

    def step(self):
        _replicated_step(self, _POOL[0, :self.numel], _POOL[1, :self.numel])
