"""Correct alternative: scale the decimals to integers over a common denominator and apportion with divmod."""

MODULE = "landscape"
ACCEPTED = ["balance_batch"]


def balance_batch(global_batch, throughputs):
    b = check_int("global_batch", global_batch)
    exact = [Fraction(str(th)) for th in _check_reals("throughputs", throughputs)]
    den = math.lcm(*(f.denominator for f in exact))
    weights = [int(f * den) for f in exact]
    total = sum(weights)
    floors, rems = zip(*(divmod(b * w, total) for w in weights), strict=True)
    parts = list(floors)
    ranked = sorted(range(len(parts)), key=lambda i: (-rems[i], i))
    for i in ranked[: b - sum(parts)]:
        parts[i] += 1
    return parts
