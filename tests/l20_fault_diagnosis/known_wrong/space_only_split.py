"""Splits on spaces only: a tab-separated capture (pasted into a ticket) glues the columns together."""

MODULE = "diagnosis"
REJECTED_BY = {"parse_dcgm_dmon": ["correctness"]}

_right_parse_dmon = parse_dcgm_dmon


def parse_dcgm_dmon(text):
    return _right_parse_dmon(text.replace("\t", "") if isinstance(text, str) else text)
