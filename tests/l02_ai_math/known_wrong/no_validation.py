"""Classic bug: no argument checks; negative sizes, float counts, unknown units and empty ranks return numbers."""

MODULE = "ai_math"
REJECTED_BY = {"contiguous_strides": ["correctness"], "gemm_ledger": ["correctness"],
               "linear_train_flops": ["correctness"], "global_mean_loss": ["correctness"],
               "lora_params": ["correctness"], "to_bytes": ["correctness"]}


def contiguous_strides(shape):
    strides, acc = [], 1
    for size in reversed(shape):
        strides.append(int(acc))
        acc *= max(size, 1)
    return tuple(reversed(strides))


def gemm_ledger(m, k, n, elem_bytes=2):
    parts = {"read_a": int(m * k * elem_bytes), "read_b": int(k * n * elem_bytes), "write_c": int(m * n * elem_bytes)}
    return {"flops": int(2 * m * k * n), **parts, "bytes": sum(parts.values())}


def linear_train_flops(n_tokens, d_in, d_out):
    f = int(2 * n_tokens * d_in * d_out)
    return {"forward": f, "backward_input": f, "backward_weight": f, "total": 3 * f}


def global_mean_loss(per_rank):
    total = sum(n for n, _ in per_rank)
    return sum(n * loss for n, loss in per_rank) / total if total else 0.0


def lora_params(d_in, d_out, rank):
    return int(rank * (d_in + d_out))


def to_bytes(amount, unit):
    factor = {"KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30,
              "TiB": 2**40, "Kb": Fraction(10**3, 8), "Mb": Fraction(10**6, 8), "Gb": Fraction(10**9, 8),
              "Tb": Fraction(10**12, 8)}.get(unit, 1)
    exact = Fraction(amount) if isinstance(amount, int) else Fraction(repr(amount)) if math.isfinite(amount) else 0
    return int(exact * factor)
