"""The lecture's sketch: nvidiactl inside each GPU device and "all" listing only nvidiactl and nvidia-uvm."""

MODULE = "k8s_gpu"
REJECTED_BY = {"cdi_spec": ["correctness"]}

_original = cdi_spec


def cdi_spec(uuids, minors, kind="nvidia.com/gpu"):
    got = _original(uuids, minors, kind)
    ctl = {"path": "/dev/nvidiactl", "type": "c", "major": 195, "minor": 255}
    for d in got["devices"]:
        if d["name"] == "all":
            d["containerEdits"]["deviceNodes"] = [ctl, {"path": "/dev/nvidia-uvm"}]
        else:
            d["containerEdits"]["deviceNodes"].append(dict(ctl))
    got["containerEdits"] = {}
    return got
