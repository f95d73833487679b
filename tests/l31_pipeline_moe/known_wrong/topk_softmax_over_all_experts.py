"""Classic bug: softmax over all E logits, then the top k probabilities kept as gates (they no longer sum to 1;
the course's lab takes the softmax over the k selected logits)."""

MODULE = "moe"
REJECTED_BY = {"topk_route": ["correctness"]}

_reference_route = topk_route


def topk_route(logits, k):
    experts, _ = _reference_route(logits, k)
    gates = []
    for row, top in zip(logits, experts, strict=True):
        w = [math.exp(x - max(row)) for x in row]
        gates.append([w[e] / sum(w) for e in top])
    return experts, gates
