"""Every row of Capacity/Allocatable parsed as an int: the node's cpu 223500m makes a valid GPU node fail."""

MODULE = "k8s_gpu"
REJECTED_BY = {"parse_describe_node": ["correctness"]}

_original = parse_describe_node


def parse_describe_node(text, resource="nvidia.com/gpu"):
    section = None
    for line in text.splitlines():
        if line and not line[0].isspace():
            section = line.strip()
        elif section in ("Capacity:", "Allocatable:") and line.strip():
            _count("text", section, line, line.split()[1])
    return _original(text, resource)
