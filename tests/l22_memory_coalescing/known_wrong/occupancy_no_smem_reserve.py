"""Convention slip: leaves out the 1 KB of shared memory the runtime reserves per block (sm_80+)."""

MODULE = "ledger"
REJECTED_BY = {"occupancy": ["correctness"]}

_real_blocks_per_sm = blocks_per_sm


def blocks_per_sm(threads_per_block, regs_per_thread, smem_per_block, gpu):
    import dataclasses

    g = dataclasses.replace(_gpu(gpu), smem_reserved_per_block=0)
    return _real_blocks_per_sm(threads_per_block, regs_per_thread, smem_per_block, g)
