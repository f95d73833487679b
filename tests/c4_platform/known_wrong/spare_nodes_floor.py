"""Spare nodes rounded down: 7 spare GPUs make 0 spare nodes, and the first failure finds no spare."""

MODULE = "platform"
REJECTED_BY = {"rfc_sizing": ["correctness"], "self_heal": ["correctness"]}

_original = rfc_sizing


def rfc_sizing(n_gpus, gpus_per_node, nics_per_node, nic_gbit_s, spare_fraction, gpu_mtbf_cluster_h):
    got = _original(n_gpus, gpus_per_node, nics_per_node, nic_gbit_s, spare_fraction, gpu_mtbf_cluster_h)
    return {**got, "spare_nodes": got["spare_gpus"] // gpus_per_node}
