"""Classic confusion: decoupled weight decay (AdamW, the lecture's FSDP lab) where torch.optim.Adam adds wd·param to
the gradient (L2): the moments never see the decay."""

MODULE = "sharded_adam"
REJECTED_BY = {"adam_update_": ["correctness"], "ShardedAdam": ["correctness"]}

_right_adam_update_ = adam_update_


def adam_update_(param, grad, exp_avg, exp_avg_sq, step, lr, beta1, beta2, eps, weight_decay=0.0):
    param.mul_(1 - lr * weight_decay)
    _right_adam_update_(param, grad, exp_avg, exp_avg_sq, step, lr, beta1, beta2, eps, 0.0)
