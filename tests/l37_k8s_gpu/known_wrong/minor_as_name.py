"""The device named by its /dev/nvidia minor instead of its index: "3" for the second GPU of [0, 3]."""

MODULE = "k8s_gpu"
REJECTED_BY = {"cdi_spec": ["correctness"]}

_original = cdi_spec


def cdi_spec(uuids, minors, kind="nvidia.com/gpu"):
    got = _original(uuids, minors, kind)
    index_to_minor = {str(i): str(m) for i, m in enumerate(minors)}
    for d in got["devices"]:
        d["name"] = index_to_minor.get(d["name"], d["name"])
    return got
