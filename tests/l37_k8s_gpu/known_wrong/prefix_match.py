"""Rows matched by prefix: nvidia.com/gpu.shared (a renamed time-sliced resource) is read as nvidia.com/gpu."""

MODULE = "k8s_gpu"
REJECTED_BY = {"parse_describe_node": ["correctness"]}


def parse_describe_node(text, resource="nvidia.com/gpu"):
    _check_text("text", text)
    _check_resource(resource)
    wanted = {"Capacity:": "capacity", "Allocatable:": "allocatable", "Allocated resources:": "allocated"}
    found, seen, section = {}, set(), None
    for line in text.splitlines():
        if not line.strip():
            continue
        if not line[0].isspace():
            section = line.strip()
            if section in seen and section in wanted:
                raise ValueError("text describes two nodes")
            seen.add(section)
            continue
        if section in wanted and line.split()[0].startswith(resource):
            found[wanted[section]] = _count("text", section, line, line.split()[1])
    if "capacity" not in found or "allocatable" not in found:
        raise ValueError("text has no row for the resource")
    allocated = found.get("allocated", 0)
    return {
        "capacity": found["capacity"],
        "allocatable": found["allocatable"],
        "allocated": allocated,
        "free": found["allocatable"] - allocated,
    }
