"""Ridge as bandwidth over peak (bytes per FLOP): 0.0034 for an H100 instead of 295."""

MODULE = "landscape"
REJECTED_BY = {"ridge_points": ["correctness"]}


def ridge_points(table):
    return {name: bw / peak for name, (peak, bw) in _check_table(table).items()}
