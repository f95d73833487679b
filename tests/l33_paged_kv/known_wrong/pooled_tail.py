"""Classic bug: the paged blocks counted for the total of all tokens, as if ten sequences shared one tail block."""

MODULE = "paged"
REJECTED_BY = {"paged_utilization": ["correctness"]}

_correct_utilization = paged_utilization


def paged_utilization(lengths, block_size, static_max_len):
    out = _correct_utilization(lengths, block_size, static_max_len)
    out["blocks"] = blocks_needed(out["tokens"], block_size)
    out["paged_slots"] = out["blocks"] * block_size
    out["paged_utilization"] = out["tokens"] / out["paged_slots"] if out["paged_slots"] else 1.0
    out["internal_waste_slots"] = out["paged_slots"] - out["tokens"]
    return out
