"""Correct alternative: Adam written from the formulas as the README states them (g = grad + wd·param with an
ordinary product and sum, m and v by their recurrences, sqrt(v / bc2)): other roundings than torch's, a few ulps."""

MODULE = "sharded_adam"
ACCEPTED = ["adam_update_", "ShardedAdam"]


def adam_update_(param, grad, exp_avg, exp_avg_sq, step, lr, beta1, beta2, eps, weight_decay=0.0):
    t = check_int("step", step, 1)
    lr, eps, wd = _check_rate("lr", lr), _check_rate("eps", eps), _check_rate("weight_decay", weight_decay)
    beta1, beta2 = _check_rate("beta1", beta1, below_one=True), _check_rate("beta2", beta2, below_one=True)
    g = grad + wd * param
    exp_avg.copy_(beta1 * exp_avg + (1 - beta1) * g)
    exp_avg_sq.copy_(beta2 * exp_avg_sq + (1 - beta2) * g * g)
    denom = (exp_avg_sq / (1 - beta2**t)).sqrt() + eps
    param.copy_(param - lr * (exp_avg / (1 - beta1**t)) / denom)
