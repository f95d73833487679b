"""Classic bug: a preempted request goes back to the queue but keeps its blocks: the pool shrinks for good."""

MODULE = "engine"
REJECTED_BY = {"PagedEngine": ["correctness", "efficiency"]}

import inspect
import textwrap

_src = inspect.getsource(PagedEngine._schedule).replace(
    "self._release(victim)\n", "self.running.remove(victim)  # blocks kept\n")
_ns = {}
exec(compile(textwrap.dedent(_src), "<preempt_without_freeing>", "exec"), globals(), _ns)
PagedEngine._schedule = _ns["_schedule"]
