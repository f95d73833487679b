"""Only the old wording ("the client has the version"): recent drivers name the client and its pid first."""

import re

MODULE = "k8s_gpu"
REJECTED_BY = {"driver_mismatch": ["correctness"]}

_W = r"(?:[ \t]*\r?\n[^\n]*?NVRM:[ \t]*|[ \t]+)"
_OLD = re.compile(
    rf"API{_W}mismatch:{_W}the{_W}client{_W}has{_W}the{_W}version{_W}(\d+(?:\.\d+)*),{_W}but{_W}this{_W}kernel{_W}module"
    rf"{_W}has{_W}the{_W}version{_W}(\d+(?:\.\d+)*)"
)


def driver_mismatch(dmesg):
    _check_text("dmesg", dmesg)
    found = [(m.group(1), m.group(2)) for m in _OLD.finditer(dmesg)]
    return found[-1] if found else None
