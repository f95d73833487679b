"""Classic bug: GB vs GiB: every prefix taken as binary (1 GB = 2³⁰ B)."""

MODULE = "ai_math"
REJECTED_BY = {"to_bytes": ["correctness"]}

_correct_to_bytes = to_bytes


def to_bytes(amount, unit):
    binary = {"KB": "KiB", "MB": "MiB", "GB": "GiB", "TB": "TiB"}
    return _correct_to_bytes(amount, binary.get(unit, unit))
