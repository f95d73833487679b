"""Largest remainder in binary floats: 2 × 0.3 / 0.4 = 1.4999999999999998 breaks a tie the wrong way."""

MODULE = "landscape"
REJECTED_BY = {"balance_batch": ["correctness"]}


def balance_batch(global_batch, throughputs):
    b = check_int("global_batch", global_batch)
    rates = _check_reals("throughputs", throughputs)
    quotas = [b * r / sum(rates) for r in rates]
    parts = [math.floor(q) for q in quotas]
    order = sorted(range(len(quotas)), key=lambda i: (-(quotas[i] - parts[i]), i))
    for i in order[: b - sum(parts)]:
        parts[i] += 1
    return parts
