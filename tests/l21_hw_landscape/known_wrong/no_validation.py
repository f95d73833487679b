"""No argument checks: floats, bools, zero clocks, negative weights and empty lists are accepted."""

MODULE = "landscape"
REJECTED_BY = {
    "ridge_points": ["correctness"],
    "peak_flops": ["correctness"],
    "decode_floor_s": ["correctness"],
    "hetero_dp_step": ["correctness"],
    "balance_batch": ["correctness"],
}

check_int = lambda name, value, minimum=0: value
_check_real = lambda name, value, *, positive=True: value
_check_reals = lambda name, values: list(values) if hasattr(values, "__iter__") else [values]
_check_table = lambda table: dict(table) if hasattr(table, "items") else {}
