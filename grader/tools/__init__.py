"""Machine tools: ``doctor`` (what this machine can grade) and the benchmarks (``make bench*``)."""
