"""Keeps the bus id as printed: `0000:3A:00.0` and `0000:3a:00` become two different GPUs."""

MODULE = "diagnosis"
REJECTED_BY = {"parse_xid": ["correctness"]}

_right_parse_xid = parse_xid


def parse_xid(dmesg_text):
    events = _right_parse_xid(dmesg_text)
    raw = [m.group(1) for m in map(XID_LINE.search, dmesg_text.splitlines()) if m]
    return [{**e, "pci": pci} for e, pci in zip(events, raw, strict=True)]
