"""Correct alternative: a table of which stage shards which term, and traffic as whole collectives."""

MODULE = "zero"
ACCEPTED = ["zero_memory_per_gpu", "zero_comm_bytes_per_gpu"]

_SHARDED_FROM = {"optimizer": 1, "grads": 2, "weights": 3}


def zero_memory_per_gpu(n_params, n_gpus, stage, weight_bytes=2, grad_bytes=2, optimizer_bytes=12):
    n, gpus, stage = check_int("n_params", n_params), check_int("n_gpus", n_gpus, 1), _check_stage(stage)
    per_param = {
        "weights": check_int("weight_bytes", weight_bytes),
        "grads": check_int("grad_bytes", grad_bytes),
        "optimizer": check_int("optimizer_bytes", optimizer_bytes),
    }
    held = {t: shard_params(n, gpus) if stage >= s else n for t, s in _SHARDED_FROM.items()}
    return sum(held[t] * per_param[t] for t in per_param)


def zero_comm_bytes_per_gpu(n_params, n_gpus, stage, weight_bytes=2, grad_bytes=2):
    n, gpus, stage = check_int("n_params", n_params), check_int("n_gpus", n_gpus, 1), _check_stage(stage)
    w, g = check_int("weight_bytes", weight_bytes), check_int("grad_bytes", grad_bytes)
    chunk = shard_params(n, gpus)

    def ring_pass(bytes_per_param):  # reduce-scatter or all-gather: N-1 steps, one chunk each
        return sum(chunk * bytes_per_param for _ in range(gpus - 1))

    passes = {0: [g, g], 1: [g, w], 2: [g, w], 3: [w, w, g]}[stage]
    return sum(ring_pass(b) for b in passes)
