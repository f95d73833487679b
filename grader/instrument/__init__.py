"""Layer 1, instruments: everything that runs beside the learner's code and measures or restricts it.

The worker process the learner's code runs in (``worker``), counted Triton traffic (``traffic``), the compute guard
(``guard``), the interpreter's fixes (``interpreter_fixes``), the device and its timers (``device``), CUDA C++ and
numba kernels (``cuda``, ``cuda_cpu``), C++ extensions (``cpp_ext``) and gloo ranks with their comm log
(``ranks``). Instruments report data; they never decide a grade (that is the judge's, one layer up).
"""
