"""Attack: replace the Triton interpreter's load hook (where the grader counts traffic and checks
bounds) with the bare interpreter's, so a kernel that reads x twice is counted as reading nothing."""

ZERO = ["softmax_online"]
MESSAGE = "may not use"


def softmax_online(x, block_n=128):
    import triton.runtime.interpreter as interp

    builder = interp.InterpreterBuilder
    builder.create_masked_load = builder.__mro__[1].__dict__.get("create_masked_load", builder.create_masked_load)
    return softmax_fused(x)
