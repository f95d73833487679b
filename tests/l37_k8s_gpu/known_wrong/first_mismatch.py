"""The first API-mismatch message wins: after a partial upgrade the log's latest versions are ignored."""

MODULE = "k8s_gpu"
REJECTED_BY = {"driver_mismatch": ["correctness"]}


def driver_mismatch(dmesg):
    _check_text("dmesg", dmesg)
    m = MISMATCH_RE.search(dmesg)
    return (m.group(1), m.group(2)) if m else None
