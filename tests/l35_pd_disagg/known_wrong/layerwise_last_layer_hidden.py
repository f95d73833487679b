"""Counts the last layer's transfer as hidden too: 0 exposed when t_x <= t_c, L·(t_x − t_c) otherwise. Nothing
computes after the last layer, so its transfer always shows."""

MODULE = "disagg"
REJECTED_BY = {"layerwise_exposed_seconds": ["correctness"]}


def layerwise_exposed_seconds(n_layers, layer_compute_s, layer_bytes, link_bytes_per_s):
    t_x = layer_bytes / link_bytes_per_s
    return {"transfer_per_layer_s": t_x, "eager_s": n_layers * t_x,
            "layerwise_s": max(0.0, n_layers * (t_x - layer_compute_s))}
