"""Every cell accepted as printed: unknown codes and an asymmetric matrix pass silently."""

MODULE = "topology"
REJECTED_BY = {"parse_topo": ["correctness"]}


def parse_topo(text):
    if not isinstance(text, str):
        raise ValueError("text must be a str")
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.split()[:1] == ["GPU0"] and "X" not in line.split()), None)
    if start is None:
        raise ValueError("text has no header row")
    columns = _header_columns(lines[start])
    devices = [c for c in columns if c not in AFFINITY_COLUMNS]
    extra = [c for c in columns if c in AFFINITY_COLUMNS]
    topo = {"gpus": sorted(int(d[3:]) for d in devices if d.startswith("GPU")), "links": {}, "nic_links": {},
            "cpu_affinity": {}, "numa": {}}
    for line in lines[start + 1:]:
        if not line.strip() or line.strip().startswith("Legend"):
            break
        name, *cells = line.split()
        if not name.startswith("GPU"):
            continue
        if len(cells) < len(devices):
            raise ValueError(f"text: short row {line!r}")
        i = int(name[3:])
        for device, code in zip(devices, cells, strict=False):
            if device != name:
                target = topo["links"] if device.startswith("GPU") else topo["nic_links"]
                target[(i, int(device[3:])) if device.startswith("GPU") else (i, device)] = code
        rest = cells[len(devices):]
        if "CPU Affinity" in extra and rest:
            topo["cpu_affinity"][i] = rest[0]
        if "NUMA Affinity" in extra and len(rest) > 1:
            topo["numa"][i] = -1 if rest[1] == "N/A" else int(rest[1])
    return topo
