"""The missing rescale: a later block's larger maximum is used without shrinking the sum carried over."""

MODULE = "capstone"
REJECTED_BY = {"online_softmax_stream": ["correctness"]}


def online_softmax_stream(xs, block_size):
    values = _check_xs(xs)
    m, total, trace, alphas = -math.inf, 0.0, [], []
    for start in range(0, len(values), block_size):
        block = values[start : start + block_size]
        m = max(m, max(block))
        total = total + math.fsum(math.exp(x - m) for x in block)  # no total * e^(m_old - m_new)
        trace.append((m, total))
        alphas.append(0.0 if len(trace) == 1 else 1.0)
    return {"m": m, "l": total, "trace": trace, "alphas": alphas, "probs": [math.exp(x - m) / total for x in values]}
