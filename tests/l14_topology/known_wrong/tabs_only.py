"""Cells split on tabs only: real output copied from a terminal or a ticket has spaces, and the parse breaks."""

MODULE = "topology"
REJECTED_BY = {"parse_topo": ["correctness"]}

_right_parse = parse_topo


def parse_topo(text):
    if isinstance(text, str):
        table = [line for line in text.splitlines() if line.startswith(("GPU", "NIC"))]
        if table and any("\t" not in line for line in table):
            raise ValueError("text: rows must be tab-separated")
    return _right_parse(text)
