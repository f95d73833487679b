"""gpu_user_annotation counted as GPU work: the range that marks a step on the GPU track hides every idle gap."""

MODULE = "profiler"
REJECTED_BY = {"gpu_time_breakdown": ["correctness"]}

GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset", "gpu_user_annotation")
