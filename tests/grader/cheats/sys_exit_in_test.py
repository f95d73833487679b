"""Attack: sys.exit(0) inside online_softmax_state, i.e. in the middle of a test."""

ZERO = ["online_softmax_state"]


def online_softmax_state(xs):
    import sys  # here, not at module level: a module-level `import sys` would also cost the kernels

    sys.exit(0)
