"""L27 · static training memory, activations, KV cache and the attention share of training FLOPs."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grader.constants import GB, MODELS, GiB
from grader.kit import assert_exact, assert_number, assert_parts, assert_rejects, grade, learner

UNIT = "l27_memory_ledger"
training_memory = learner(UNIT, "ledger", "training_memory")
activation_bytes_per_layer = learner(UNIT, "ledger", "activation_bytes_per_layer")
kv_cache_bytes = learner(UNIT, "ledger", "kv_cache_bytes")
attention_flops_share = learner(UNIT, "ledger", "attention_flops_share")

PARTS = {"weights": "weights", "grads": "gradients", "optimizer": "optimizer states"}
sizes = st.integers(0, 10**12)
byte_sizes = st.integers(0, 16)


def assert_named_parts(got: object, want: dict, what: str, **kw) -> None:
    """assert_parts on the keys the contract names: an extra key in the learner's dict is not a mistake."""
    assert_parts({k: got[k] for k in want if k in got} if isinstance(got, dict) else got, want, what, **kw)


def assert_training_memory(got: object, n: int, per_param: dict[str, int], call: str) -> None:
    """Part by part, then the total: the message names the wrong term and its bytes per parameter."""
    want = {key: per_param[key] * n for key in PARTS}
    want["total"] = sum(want.values())
    if isinstance(got, dict):  # a wrong part first, in bytes per parameter: the question the hints ask
        for key, name in PARTS.items():
            if type(got.get(key)) is int and got[key] != want[key]:
                seen = f"{got[key] / n:g} B/param" if n else "not 0 for Ψ = 0"
                assert_exact(got[key], want[key], f"{call}[{key!r}] ({name})", unit="B",
                             why=f"{per_param[key]} B/param × Ψ; yours is {seen}")
    assert_named_parts(got, want, call, total="total", unit="B")


# ---- training_memory ---------------------------------------------------------------------------


@grade(training_memory, "correctness", points=3,
       hint="Which three tensors does Adam keep per parameter in fp32, and how many bytes is each?")
def test_training_memory_worked_numbers():
    """7B → 112 GB; 70B → 1120 GB (1043 GiB); LLaMA-2-7B exact; one term per line, 2 + 2 + 12 B/param."""
    default = {"weights": 2, "grads": 2, "optimizer": 12}
    for n in (7_000_000_000, 70_000_000_000, MODELS["llama-2-7b"].n_params):
        assert_training_memory(training_memory(n), n, default, f"training_memory({n:_})")
    assert_exact(training_memory(70_000_000_000)["total"], 1120 * GB, "training_memory(70B)['total']", unit="B")
    assert 1043 * GiB < 1120 * GB < 1044 * GiB  # the same bytes, in GiB: the grader converts, you don't


@grade(training_memory, "correctness", points=2,
       hint="Each part is Ψ × its own bytes per parameter; the total is the sum of the parts.")
@given(n=sizes, w=byte_sizes, g=byte_sizes, o=byte_sizes)
def test_training_memory_any_precision(n, w, g, o):
    """Any bytes-per-parameter convention (fp32 weights, no gradients at inference, 8-bit Adam...)."""
    got = training_memory(n, weight_bytes=w, grad_bytes=g, optimizer_bytes=o)
    assert_training_memory(
        got,
        n,
        {"weights": w, "grads": g, "optimizer": o},
        f"training_memory({n}, weight_bytes={w}, grad_bytes={g}, optimizer_bytes={o})",
    )


@grade(training_memory, "correctness", points=1, hint="Raise ValueError naming the argument; is 7e9 an int?",
       validation=True)
@pytest.mark.parametrize(
    "args, kwargs, name",
    [
        ((-1,), {}, "n_params"),
        ((7e9,), {}, "n_params"),
        ((10,), {"optimizer_bytes": -4}, "optimizer_bytes"),
        ((10,), {"weight_bytes": 2.0}, "weight_bytes"),
        ((10,), {"grad_bytes": -2}, "grad_bytes"),
    ],
)
def test_training_memory_rejects_bad_arguments(args, kwargs, name):
    assert_rejects(training_memory, args, name, kwargs)


# ---- activation_bytes_per_layer ----------------------------------------------------------------

MODES = ("none", "selective", "full")


def activations(b: int, s: int, d: int, h: int, mode: str) -> int:
    return {"none": 34 * b * s * d + 5 * b * h * s * s, "selective": 34 * b * s * d, "full": 2 * b * s * d}[mode]


@grade(activation_bytes_per_layer, "correctness", points=3,
       hint="Which term grows with S², and which recompute level throws it away?")
def test_activations_worked_numbers():
    """Course: B1 S4096 d4096 H32 → 570,425,344 + 2,684,354,560 B; Korthikanti: GPT-3 layer at S=2048 → sbh(34 + 80)."""
    cases = [
        ((1, 4096, 4096, 32), {"none": 3_254_779_904, "selective": 570_425_344, "full": 33_554_432}),
        ((1, 2048, 12288, 96), {"none": 2_868_903_936, "selective": 855_638_016, "full": 50_331_648}),
    ]
    for args, want in cases:
        for mode, value in want.items():
            assert_exact(
                activation_bytes_per_layer(*args, recompute=mode),
                value,
                f"activation_bytes_per_layer{args}, recompute={mode!r}",
                unit="B",
            )


@grade(activation_bytes_per_layer, "correctness", points=2,
       hint="Scores are B·H·S² elements: 2 B for QK^T, 2 B for the softmax, 1 B for the dropout mask.")
@given(b=st.integers(0, 64), s=st.integers(0, 2**17), d=st.integers(0, 2**15), h=st.integers(1, 128))
def test_activations_closed_form_and_order(b, s, d, h):
    """Closed form for every level, and full ≤ selective ≤ none."""
    got = {m: activation_bytes_per_layer(b, s, d, h, recompute=m) for m in MODES}
    for mode in MODES:
        assert_exact(
            got[mode], activations(b, s, d, h, mode), f"activation_bytes_per_layer({b}, {s}, {d}, {h}, {mode!r})",
            unit="B",
        )
    assert got["full"] <= got["selective"] <= got["none"], f"recompute saves nothing: {got}"


@grade(activation_bytes_per_layer, "correctness", points=1, hint="Raise ValueError naming the argument.",
       validation=True)
@pytest.mark.parametrize(
    "args, kwargs, name",
    [
        ((-1, 8, 8, 2), {}, "batch"),
        ((1, 8.0, 8, 2), {}, "seq_len"),
        ((1, 8, 8, 0), {}, "n_heads"),
        ((1, 8, 8, 2), {"recompute": "partial"}, "recompute"),
    ],
)
def test_activations_reject_bad_arguments(args, kwargs, name):
    assert_rejects(activation_bytes_per_layer, args, name, kwargs)


# ---- kv_cache_bytes ----------------------------------------------------------------------------


def kv(model_key: str, seq_len: int, batch: int, elem_bytes: int = 2) -> int:
    m = MODELS[model_key]
    return kv_cache_bytes(m.n_layers, m.n_kv_heads, m.head_dim, seq_len, batch, elem_bytes)


@grade(kv_cache_bytes, "correctness", points=3,
       hint="Per token and layer, how many vectors are cached: K and V, once each?")
def test_kv_worked_numbers():
    """Per token: 524,288 (LLaMA-2-7B), 131,072 (LLaMA-3-8B), 327,680 (LLaMA-3-70B); 70B 32×8192 → 80 GiB."""
    for key, per_token in [("llama-2-7b", 524_288), ("llama-3-8b", 131_072), ("llama-3-70b", 327_680)]:
        assert_exact(kv(key, 1, 1), per_token, f"kv_cache_bytes per token of {MODELS[key].name}",
                     why="K and V once each", unit="B")
    assert_exact(kv("llama-3-70b", 8192, 32), 80 * GiB, "kv_cache_bytes(LLaMA-3-70B, S=8192, B=32)", unit="B")
    assert_exact(kv("llama-3-70b", 32768, 1), 10 * GiB, "kv_cache_bytes(LLaMA-3-70B, S=32768, B=1)", unit="B")
    assert_exact(kv("llama-3-70b", 4096, 32, elem_bytes=1), 20 * GiB, "kv_cache_bytes(LLaMA-3-70B, 32×4096, fp8)",
                 unit="B")


@grade(kv_cache_bytes, "correctness", points=2,
       hint="Every argument enters once, as a factor; elem_bytes is 1 for fp8, 4 for fp32.")
@given(
    layers=st.integers(0, 128),
    heads=st.integers(0, 128),
    dim=st.sampled_from([1, 64, 80, 96, 128, 256]),
    s=st.integers(0, 2**20),
    b=st.integers(0, 512),
    e=st.sampled_from([1, 2, 4]),
)
def test_kv_closed_form(layers, heads, dim, s, b, e):
    """2 · L · H_kv · d_head · S · B · elem_bytes, exactly, for every precision."""
    assert_exact(
        kv_cache_bytes(layers, heads, dim, s, b, e),
        2 * layers * heads * dim * s * b * e,
        f"kv_cache_bytes({layers}, {heads}, {dim}, {s}, {b}, elem_bytes={e})",
        unit="B",
    )


@grade(kv_cache_bytes, "correctness", points=1,
       hint="Raise ValueError naming the argument; is 10.0 GiB a number of bytes?", validation=True)
@pytest.mark.parametrize(
    "args, name",
    [
        ((-80, 8, 128, 1, 1), "n_layers"),
        ((80, 8, 128, 1, -1), "batch"),
        ((80, 8, 128, 1.5, 1), "seq_len"),
        ((80, 8, 128, 1, 1, 2.0), "elem_bytes"),
        ((80, -8, 128, 1, 1), "n_kv_heads"),
    ],
)
def test_kv_rejects_bad_arguments(args, name):
    assert_rejects(kv_cache_bytes, args, name)


# ---- attention_flops_share ---------------------------------------------------------------------


@grade(attention_flops_share, "correctness", points=2,
       hint="Two S×S matmuls per layer forward, 2·S²·d FLOPs each; the backward costs twice the forward.")
def test_attention_share_worked_numbers():
    """Course (L=32, d=4096, P=7e9): 7.67 % at S=2048, 122.7 % at S=32768."""
    for s, want in [(2048, 0.0766958446), (32768, 1.2271335131)]:
        got = attention_flops_share(32, 4096, 7_000_000_000, s)
        assert_number(got, want, f"attention_flops_share(32, 4096, 7e9, {s}), the ratio 12·L·S²·d / 6PS", rel=1e-6)


@grade(attention_flops_share, "correctness", points=2,
       hint="12·L·S²·d / (6·P·S): what does the share do when S doubles?")
@given(layers=st.integers(1, 128), d=st.integers(1, 2**15), p=st.integers(1, 10**12), s=st.integers(1, 2**20))
def test_attention_share_closed_form(layers, d, p, s):
    """2·L·S·d / P, linear in S."""
    assert_number(attention_flops_share(layers, d, p, s), 2 * layers * s * d / p,
                  f"attention_flops_share({layers}, {d}, {p}, {s})")


@grade(attention_flops_share, "correctness", points=1,
       hint="A share of zero weight FLOPs means nothing: which arguments must be at least 1?", validation=True)
@pytest.mark.parametrize(
    "args, name",
    [
        ((32, 4096, 0, 2048), "n_params"),
        ((32, 4096, 7e9, 2048), "n_params"),
        ((32, 4096, 10**9, 0), "seq_len"),
        ((-1, 4096, 10**9, 8), "n_layers"),
    ],
)
def test_attention_share_rejects_bad_arguments(args, name):
    assert_rejects(attention_flops_share, args, name)
