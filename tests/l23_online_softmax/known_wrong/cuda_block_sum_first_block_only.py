"""Classic bug: one launch, then returns the first block's partial sum: only the first 2·BLOCK elements count."""

MODULE = "cuda_reduce"
REJECTED_BY = {"block_sum": ["correctness", "efficiency"]}


def block_sum(x):
    n_blocks = (x.shape[0] + 2 * BLOCK - 1) // (2 * BLOCK)
    partials = cuda.device_array(n_blocks, dtype=np.float32)
    _block_sum_kernel[n_blocks, BLOCK](x, partials)
    return partials[:1]
