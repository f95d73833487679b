"""Classic bug: registers counted per thread (regs × threads), not allocated per warp in units of 256."""

MODULE = "ledger"
REJECTED_BY = {"occupancy": ["correctness"]}


def blocks_per_sm(threads_per_block, regs_per_thread, smem_per_block, gpu):
    g = _gpu(gpu)
    threads = check_int("threads_per_block", threads_per_block, 1)
    regs = check_int("regs_per_thread", regs_per_thread, 1)
    smem = check_int("smem_per_block", smem_per_block, 0)
    if threads > g.max_threads_per_block or regs > g.max_regs_per_thread:
        raise ValueError("block too large")
    warps = math.ceil(threads / WARP_SIZE)
    smem_alloc = math.ceil(smem / g.smem_alloc_unit) * g.smem_alloc_unit + g.smem_reserved_per_block
    if smem_alloc > g.smem_per_sm:
        raise ValueError("smem too large")
    return min(g.max_blocks_per_sm, 64 // warps, g.registers_per_sm // (regs * threads), g.smem_per_sm // smem_alloc)
