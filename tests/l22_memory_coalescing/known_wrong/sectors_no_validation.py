"""No argument checks: a negative stride or a 0-byte element returns a number instead of ValueError."""

MODULE = "ledger"
REJECTED_BY = {"warp_sectors": ["correctness"]}


def check_int(name, value, minimum):
    return value
