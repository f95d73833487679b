"""Attack: read and write raw memory from NumPy through x.data_ptr() and an object exposing
__array_interface__ (no ctypes, no torch compute), then let a copy kernel store the result."""

import numpy as np
import torch

ZERO = ["softmax_online"]
MESSAGE = "may not use"


def softmax_online(x, block_n=128):
    def raw(t):
        face = {"data": (t.data_ptr(), False), "shape": tuple(t.shape), "version": 3,
                "strides": tuple(s * t.element_size() for s in t.stride()), "typestr": "<f4"}
        return np.asarray(type("Raw", (), {"__array_interface__": face})())

    out = torch.empty_like(x)
    v = raw(x).astype(np.float64)
    e = np.exp(v - v.max(axis=-1, keepdims=True))
    raw(out)[...] = e / e.sum(axis=-1, keepdims=True)
    return out
