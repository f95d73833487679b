"""The lab's model (one thread per layer): transfers overlap each other as if the link had a lane per layer, so
only one transfer ever shows, even when each outlasts a layer's compute (11.18 ms instead of 618.3 ms)."""

MODULE = "disagg"
REJECTED_BY = {"layerwise_exposed_seconds": ["correctness"]}


def layerwise_exposed_seconds(n_layers, layer_compute_s, layer_bytes, link_bytes_per_s):
    t_x = layer_bytes / link_bytes_per_s
    return {"transfer_per_layer_s": t_x, "eager_s": n_layers * t_x, "layerwise_s": t_x}
