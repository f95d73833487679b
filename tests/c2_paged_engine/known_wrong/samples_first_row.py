"""Bug: a request that finished its prefill chunk samples from the chunk's first row instead of its last."""

MODULE = "engine"
REJECTED_BY = {"PagedEngine": ["correctness"]}

import inspect
import textwrap

_src = inspect.getsource(PagedEngine.step).replace("logits[row - 1]", "logits[row - n]")
_ns = {}
exec(compile(textwrap.dedent(_src), "<samples_first_row>", "exec"), globals(), _ns)
PagedEngine.step = _ns["step"]
