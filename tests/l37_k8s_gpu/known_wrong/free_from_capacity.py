"""Free GPUs counted from Capacity: the GPU the device plugin marked Unhealthy is offered again."""

MODULE = "k8s_gpu"
REJECTED_BY = {"parse_describe_node": ["correctness"]}

_original = parse_describe_node


def parse_describe_node(text, resource="nvidia.com/gpu"):
    got = _original(text, resource)
    return {**got, "free": got["capacity"] - got["allocated"]}
