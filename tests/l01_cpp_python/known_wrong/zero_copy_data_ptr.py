"""Classic mistake: sharing judged by data_ptr(): a slice starts inside the same storage, so it reads as a copy."""

MODULE = "boundary"
REJECTED_BY = {"zero_copy_report": ["correctness"]}

_solution_zero_copy_report = zero_copy_report


def zero_copy_report(x):
    out = _solution_zero_copy_report(x)
    out["slice"] = x[1:].data_ptr() == x.data_ptr()
    return out
