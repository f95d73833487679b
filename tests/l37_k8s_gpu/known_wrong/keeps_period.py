"""Versions read as [0-9.]+: the sentence's full stop sticks to the module version ("525.85.12.")."""

import re

MODULE = "k8s_gpu"
REJECTED_BY = {"driver_mismatch": ["correctness"]}

_LOOSE = re.compile(MISMATCH_RE.pattern.replace(r"(\d+(?:\.\d+)*)", r"([0-9.]+)"), re.DOTALL)


def driver_mismatch(dmesg):
    _check_text("dmesg", dmesg)
    found = [(m.group(1), m.group(2)) for m in _LOOSE.finditer(dmesg)]
    return found[-1] if found else None
