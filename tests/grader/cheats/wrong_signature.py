"""Not an attack, a broken submission: softmax_online lost its block_n parameter. That exercise
scores 0 with a message about the signature; every other exercise is graded as usual."""

import torch

ZERO = ["softmax_online"]
MESSAGE = "signature"


def softmax_online(x):
    return torch.empty_like(x)
