"""Classic bug: forgets the 32-blocks-per-SM limit, so 32-thread blocks look like 100 % occupancy."""

MODULE = "ledger"
REJECTED_BY = {"occupancy": ["correctness"]}

_real_blocks_per_sm = blocks_per_sm


def blocks_per_sm(threads_per_block, regs_per_thread, smem_per_block, gpu):
    import dataclasses

    g = dataclasses.replace(_gpu(gpu), max_blocks_per_sm=10**9)
    return _real_blocks_per_sm(threads_per_block, regs_per_thread, smem_per_block, g)
