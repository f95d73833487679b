"""Matches `Xid (PCI:...)` without `NVRM:`: the NVSwitch SXid lines become GPU events."""

MODULE = "diagnosis"
REJECTED_BY = {"parse_xid": ["correctness"]}

XID_LINE = re.compile(r"Xid \(PCI:([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2})(?:\.[0-7])?\): (\d+),(.*)$")
