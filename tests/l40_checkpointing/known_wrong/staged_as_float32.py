"""Stages every tensor with .float() on the way to the host: bf16/uint8 state reloads as fp32."""

MODULE = "checkpoint"
REJECTED_BY = {"atomic_save": ["correctness"]}

_right_save = atomic_save


def _staged(value):
    if isinstance(value, dict):
        return {k: _staged(v) for k, v in value.items()}
    return value.detach().cpu().float() if isinstance(value, torch.Tensor) else value


def atomic_save(state, path):
    if not isinstance(state, dict):
        raise ValueError("state must be a dict")
    return _right_save(_staged(state), path)
