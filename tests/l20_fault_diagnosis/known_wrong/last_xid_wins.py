"""A GPU's action is that of its latest Xid: a 45 after a 79 hides the dead GPU."""

MODULE = "diagnosis"
REJECTED_BY = {"triage_xid": ["correctness"]}


def triage_xid(dmesg_text, pci_to_gpu):
    _check_text("dmesg_text", dmesg_text)
    buses = _check_pci_map(pci_to_gpu)
    out = {}
    for e in parse_xid(dmesg_text):
        if e["pci"] not in buses:
            raise ValueError(f"pci_to_gpu has no GPU on bus {e['pci']}")
        row = out.setdefault(buses[e["pci"]], {"action": "app", "xids": []})
        row["action"] = XID_ACTIONS.get(e["xid"], "investigate")
        row["xids"] = sorted(set(row["xids"]) | {e["xid"]})
    return dict(sorted(out.items()))
