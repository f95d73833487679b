"""Spare GPUs as ceil(fraction · n) in floats: 0.07 · 100 = 7.000000000000001 buys an 8th spare."""

import math

MODULE = "platform"
REJECTED_BY = {"rfc_sizing": ["correctness"]}

_original = rfc_sizing


def rfc_sizing(n_gpus, gpus_per_node, nics_per_node, nic_gbit_s, spare_fraction, gpu_mtbf_cluster_h):
    got = _original(n_gpus, gpus_per_node, nics_per_node, nic_gbit_s, spare_fraction, gpu_mtbf_cluster_h)
    spare = math.ceil(spare_fraction * n_gpus)
    return {**got, "spare_gpus": spare, "spare_nodes": -(-spare // gpus_per_node)}
