"""Classic bug: (P − 1) latencies instead of 2(P − 1): only the reduce-scatter's messages, not the all-gather's."""

MODULE = "scaling"
REJECTED_BY = {"ddp_step_seconds": ["correctness"], "predicted_efficiency": ["correctness"]}


def _terms(world_size, grad_bytes):
    return 1.0 * (world_size - 1), 2.0 * (world_size - 1) / world_size * grad_bytes
