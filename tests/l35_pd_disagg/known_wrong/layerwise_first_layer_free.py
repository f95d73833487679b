"""Queueing counted from time 0: when t_x > t_c, exposed = L·(t_x − t_c), forgetting that the first transfer
cannot start before the first layer is computed (614.8 ms instead of 618.3 ms at 12 GB/s)."""

MODULE = "disagg"
REJECTED_BY = {"layerwise_exposed_seconds": ["correctness"]}


def layerwise_exposed_seconds(n_layers, layer_compute_s, layer_bytes, link_bytes_per_s):
    t_x = layer_bytes / link_bytes_per_s
    exposed = t_x if t_x <= layer_compute_s else n_layers * (t_x - layer_compute_s)
    return {"transfer_per_layer_s": t_x, "eager_s": n_layers * t_x, "layerwise_s": exposed}
