"""Classic bug: bytes computed in floats, `int(amount * factor)`: 4.1 MB becomes 4 099 999 B (truncated)."""

MODULE = "ai_math"
REJECTED_BY = {"to_bytes": ["correctness"]}

_exact_to_bytes = to_bytes


def to_bytes(amount, unit):
    _exact_to_bytes(amount, unit)  # the same validation: only the arithmetic differs
    factor = {"B": 1.0, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "KiB": 2.0**10, "MiB": 2.0**20,
              "GiB": 2.0**30, "TiB": 2.0**40, "Kb": 125.0, "Mb": 1.25e5, "Gb": 1.25e8, "Tb": 1.25e11}[unit]
    return int(amount * factor)
