"""Compares opCounts as strings: "ff" > "1f4", so the hang looks 245 collectives earlier."""

MODULE = "diagnosis"
REJECTED_BY = {"nccl_hang_report": ["correctness"]}

_int = int


def int(value, base=10):  # the bug: the hex count keeps its string order
    if base == 16:
        return _HexStr(value)
    return _int(value, base)


class _HexStr(str):
    def __index__(self):
        return _int(self, 16)
