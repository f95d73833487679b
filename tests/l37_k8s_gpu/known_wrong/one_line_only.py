"""The message matched as one line (the lecture prints it so): the kernel log wraps it over NVRM: lines."""

import re

MODULE = "k8s_gpu"
REJECTED_BY = {"driver_mismatch": ["correctness"]}

_ONE = re.compile(
    r"API mismatch: the client has the version (\d+(?:\.\d+)*), but this kernel module has the "
    r"version (\d+(?:\.\d+)*)"
)


def driver_mismatch(dmesg):
    _check_text("dmesg", dmesg)
    found = _ONE.findall(dmesg)
    return found[-1] if found else None
