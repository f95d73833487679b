"""Every cuda_runtime event taken as a launch: a synchronous cudaMemcpy's copy gets a latency."""

MODULE = "profiler"
REJECTED_BY = {"launch_latency": ["correctness"]}

LAUNCH_NAMES = frozenset(LAUNCH_NAMES | {"cudaMemcpy", "cudaStreamSynchronize", "cudaEventRecord"})
