"""The lecture's arithmetic: the bytes counted in GiB, then divided by a link in decimal GB/s as if they were GB
(32K tokens: "10 GB / 45 GB/s = 222 ms" instead of 238.6 ms)."""

MODULE = "disagg"
REJECTED_BY = {"kv_transfer_seconds": ["correctness"]}


def kv_transfer_seconds(n_bytes, link_bytes_per_s, latency_s=0.0):
    check_int("n_bytes", n_bytes)
    check_real("link_bytes_per_s", link_bytes_per_s, positive=True)
    check_real("latency_s", latency_s)
    return latency_s + (n_bytes / 2**30) / (link_bytes_per_s / 1e9)
