"""Kernel instrumentation: counted traffic, the compute guard, the static audit, interpreter fixes, CUDA, gpu_perf."""
