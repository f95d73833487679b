"""Classic bug: units compared case-insensitively, so a 400 Gb/s NIC becomes 400 GB/s (bits read as bytes)."""

MODULE = "ai_math"
REJECTED_BY = {"to_bytes": ["correctness"]}

_correct_to_bytes = to_bytes


def to_bytes(amount, unit):
    upper = unit.upper().replace("IB", "iB")
    return _correct_to_bytes(amount, upper if upper in UNITS else unit)
