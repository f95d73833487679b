"""Classic bug (the lecture's "bulldozer"): a prompt is prefilled whole in one step, past the budget: no chunking."""

MODULE = "paged"
REJECTED_BY = {"schedule_continuous": ["correctness"]}

import inspect

_src = inspect.getsource(schedule_continuous).replace(
    "            n = min(known[i] - computed[i], budget)\n            if blocks_needed(n, b) > free[0]:",
    "            n = known[i] - computed[i]\n            if blocks_needed(n, b) > free[0]:")
assert _src != inspect.getsource(schedule_continuous)
exec(compile(_src, "<no_chunked_prefill>", "exec"))
