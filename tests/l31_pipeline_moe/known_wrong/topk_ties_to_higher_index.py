"""Classic bug: argsort ascending then reversed: among equal logits the HIGHER expert index wins."""

MODULE = "moe"
REJECTED_BY = {"topk_route": ["correctness"]}

_reference_route = topk_route


def topk_route(logits, k):
    _reference_route(logits, k)  # its checks
    experts, gates = [], []
    for row in logits:
        top = sorted(range(len(row)), key=lambda e: (row[e], e))[::-1][:k]
        w = [math.exp(row[e] - row[top[0]]) for e in top]
        experts.append(top)
        gates.append([v / sum(w) for v in w])
    return experts, gates
