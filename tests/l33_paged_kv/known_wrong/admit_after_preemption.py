"""Bug: waiting requests are admitted even in a step that just preempted one (vLLM V1 admits none then)."""

MODULE = "paged"
REJECTED_BY = {"schedule_continuous": ["correctness"]}

import inspect

_src = inspect.getsource(schedule_continuous).replace("while not preempted and waiting", "while waiting")
exec(compile(_src, "<admit_after_preemption>", "exec"))
