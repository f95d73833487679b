"""Cheat: copies x to the host, transposes it with NumPy and copies it back."""

MODULE = "cuda_transpose"
REJECTED_BY = {"transpose_smem": ["correctness", "efficiency"]}


def transpose_smem(x):
    return cuda.to_device(np.ascontiguousarray(x.copy_to_host().T))
