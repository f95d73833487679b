"""Bug: a preempted request is appended to the back of the waiting queue instead of its front."""

MODULE = "paged"
REJECTED_BY = {"schedule_continuous": ["correctness"]}

import inspect

_src = inspect.getsource(schedule_continuous).replace("waiting.appendleft(victim)", "waiting.append(victim)")
exec(compile(_src, "<preempted_to_back>", "exec"))
