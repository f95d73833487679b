"""Another correct algorithm: heapq.nlargest on (logit, −index) for the top k, and gates as exp(l − logsumexp)."""

import heapq

MODULE = "moe"
ACCEPTED = ["topk_route"]

_reference_route = topk_route


def topk_route(logits, k):
    _reference_route(logits, k)  # the same checks
    experts, gates = [], []
    for row in logits:
        top = [e for _, e in heapq.nlargest(k, ((row[e], -e) for e in range(len(row))))]
        top = [-e for e in top]
        high = row[top[0]]
        lse = high + math.log(math.fsum(math.exp(row[e] - high) for e in top))
        experts.append(top)
        gates.append([math.exp(row[e] - lse) for e in top])
    return experts, gates
