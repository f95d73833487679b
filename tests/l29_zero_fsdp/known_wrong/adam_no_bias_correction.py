"""Classic bug: Adam without bias correction; the first steps are ~10× too small (m starts at 0)."""

MODULE = "sharded_adam"
REJECTED_BY = {"adam_update_": ["correctness"], "ShardedAdam": ["correctness"]}


def adam_update_(param, grad, exp_avg, exp_avg_sq, step, lr, beta1, beta2, eps, weight_decay=0.0):
    check_int("step", step, 1)
    g = grad.add(param, alpha=weight_decay) if weight_decay != 0 else grad
    exp_avg.lerp_(g, 1 - beta1)
    exp_avg_sq.mul_(beta2).addcmul_(g, g, value=1 - beta2)
    param.addcdiv_(exp_avg, exp_avg_sq.sqrt().add_(eps), value=-lr)
