"""Classic mistake: assuming .to() and .contiguous() always copy; both return the tensor itself when nothing changes."""

MODULE = "boundary"
REJECTED_BY = {"zero_copy_report": ["correctness"]}

_solution_zero_copy_report = zero_copy_report


def zero_copy_report(x):
    out = _solution_zero_copy_report(x)
    out["to_same_dtype"] = False
    out["contiguous_of_contiguous"] = False
    return out
