"""Correct alternatives: sections split by regex, prefixes stripped before one flat match, a spec built in passes."""

import re

MODULE = "k8s_gpu"
ACCEPTED = ["parse_describe_node", "driver_mismatch", "cdi_spec"]


def parse_describe_node(text, resource="nvidia.com/gpu"):
    _check_text("text", text)
    _check_resource(resource)
    sections = {}
    for m in re.finditer(r"^(\S[^\n]*?)[ \t]*\r?\n((?:[ \t][^\n]*\n?|[ \t]*\r?\n)*)", text + "\n", re.M):
        title = m.group(1).strip()
        if title in sections and title in ("Capacity:", "Allocatable:", "Allocated resources:"):
            raise ValueError("text: two nodes in one output")
        sections[title] = m.group(2)

    def row(title, sep):
        body = sections.get(title, "")
        hits = re.findall(rf"^[ \t]+{re.escape(resource)}{sep}[ \t]+(\S+)", body, re.M)
        return [_count("text", title, h, h) for h in hits[-1:]]

    cap, alloc = row("Capacity:", ":"), row("Allocatable:", ":")
    if not cap or not alloc:
        raise ValueError(f"text lacks a {resource} row under Capacity or Allocatable")
    req = row("Allocated resources:", "")
    used = req[0] if req else 0
    return {"capacity": cap[0], "allocatable": alloc[0], "allocated": used, "free": alloc[0] - used}


def driver_mismatch(dmesg):
    _check_text("dmesg", dmesg)
    flat = " ".join(ln.split("NVRM:", 1)[1] if "NVRM:" in ln else ln for ln in dmesg.splitlines())
    flat = re.sub(r"\s+", " ", flat)
    pairs = re.findall(
        r"API mismatch: the client (?:[^,]*? )?has the version (\d+(?:\.\d+)*), but this kernel module "
        r"has the version (\d+(?:\.\d+)*)",
        flat,
    )
    return tuple(pairs[-1]) if pairs else None


def cdi_spec(uuids, minors, kind="nvidia.com/gpu"):
    uuids, minors = _check_cdi_args(uuids, minors, kind)
    nodes = [{"path": f"/dev/nvidia{m}", "type": "c", "major": 195, "minor": m} for m in minors]
    named = [(name, nd) for i, nd in enumerate(nodes) for name in (str(i), uuids[i])]
    devices = [{"name": name, "containerEdits": {"deviceNodes": [dict(nd)]}} for name, nd in named]
    devices += [{"name": "all", "containerEdits": {"deviceNodes": [dict(nd) for nd in nodes]}}]
    edits = {
        "deviceNodes": [
            {"path": "/dev/nvidiactl", "type": "c", "major": 195, "minor": 255},
            {"path": "/dev/nvidia-uvm"},
            {"path": "/dev/nvidia-uvm-tools"},
        ]
    }
    return {"cdiVersion": "0.5.0", "kind": kind, "devices": devices, "containerEdits": edits}
