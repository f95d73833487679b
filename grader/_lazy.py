"""``torch`` imported on first use, so grading a ledger unit never pays for it (about 2 s a process).

Engine modules that only need torch for kernel exercises write ``from grader._lazy import torch``;
the first attribute looked up (``torch.Tensor``, ``torch.equal``...) imports the real module.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class _LazyModule(ModuleType):
    def __getattr__(self, attr: str) -> Any:
        return getattr(importlib.import_module(self.__name__), attr)


torch: Any = _LazyModule("torch")
