"""A node without GPU pods has no GPU row under Allocated resources: treated as an error, not as 0 allocated."""

MODULE = "k8s_gpu"
REJECTED_BY = {"parse_describe_node": ["correctness"]}

_original = parse_describe_node


def parse_describe_node(text, resource="nvidia.com/gpu"):
    got = _original(text, resource)
    rows = [ln for ln in text.splitlines() if ln.split()[:1] == [resource]]
    if not rows:
        raise ValueError(f"text has no {resource} row under Allocated resources")
    return got
