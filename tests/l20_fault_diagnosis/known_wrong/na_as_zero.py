"""Reads N/A as 0: a missing sample becomes a GPU at zero activity, the next outlier."""

MODULE = "diagnosis"
REJECTED_BY = {"parse_dcgm_dmon": ["correctness"]}


def _dmon_value(token, number):
    return 0.0 if token == "N/A" else float(token)
