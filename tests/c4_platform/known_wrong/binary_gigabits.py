"""NIC rate converted with 2**30: 400 Gb/s read as 400 Gib/s (7.4 % too fast)."""

MODULE = "platform"
REJECTED_BY = {"rfc_sizing": ["correctness"], "self_heal": ["correctness"]}

_original = rfc_sizing


def rfc_sizing(n_gpus, gpus_per_node, nics_per_node, nic_gbit_s, spare_fraction, gpu_mtbf_cluster_h):
    got = _original(n_gpus, gpus_per_node, nics_per_node, nic_gbit_s, spare_fraction, gpu_mtbf_cluster_h)
    return {**got, "injection_bytes_s": nics_per_node * nic_gbit_s * 2**30 // 8}
