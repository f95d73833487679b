"""Classic bug: a preempted request goes back to the queue but its blocks are never returned to the pool."""

MODULE = "paged"
REJECTED_BY = {"schedule_continuous": ["correctness"]}

import inspect

_src = inspect.getsource(schedule_continuous).replace(
    "release(victim)\n", "running.remove(victim)  # its blocks stay allocated\n")
exec(compile(_src, "<preempt_without_freeing>", "exec"))
