"""The header split on whitespace: "CPU Affinity" becomes two device columns and every row looks short."""

MODULE = "topology"
REJECTED_BY = {"parse_topo": ["correctness"]}


def _header_columns(line):
    return line.split()
