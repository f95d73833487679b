"""L08 · A LLaMA decoder on paper: parameter ledger, total parameters, KV bytes per token, block shapes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grader.constants import MODELS, GiB, Model
from grader.kit import assert_exact, assert_parts, assert_rejects, grade, learner

UNIT = "l08_transformer_ops"
llama_param_ledger = learner(UNIT, "transformer_ops", "llama_param_ledger")
llama_params = learner(UNIT, "transformer_ops", "llama_params")
kv_bytes_per_token = learner(UNIT, "transformer_ops", "kv_bytes_per_token")
block_shapes = learner(UNIT, "transformer_ops", "block_shapes")

LLAMA2_7B = MODELS["llama-2-7b"]


def assert_named_parts(got: object, want: dict, what: str, **kw) -> None:
    """assert_parts on the keys the contract names: an extra key in the learner's dict is not a mistake."""
    assert_parts({k: got[k] for k in want if k in got} if isinstance(got, dict) else got, want, what, **kw)


@st.composite
def configs(draw) -> Model:
    """A small LLaMA-shaped config: heads divide hidden, KV heads divide heads."""
    n_kv = draw(st.integers(1, 8))
    n_heads = n_kv * draw(st.integers(1, 8))
    head_dim = draw(st.integers(1, 64))
    return Model("drawn", n_layers=draw(st.integers(1, 96)), hidden=n_heads * head_dim, n_heads=n_heads,
                 n_kv_heads=n_kv, ffn_hidden=draw(st.integers(1, 50_000)), vocab=draw(st.integers(1, 300_000)),
                 n_params=0, tied_embeddings=draw(st.booleans()))


def args_of(m: Model) -> tuple:
    return (m.hidden, m.n_layers, m.ffn_hidden, m.vocab, m.n_heads, m.n_kv_heads, m.tied_embeddings)


def oracle(m: Model) -> dict[str, int]:
    """The grader's ledger: weight matrices and norm vectors counted one by one."""
    h, d, f, v = m.hidden, m.hidden // m.n_heads, m.ffn_hidden, m.vocab
    per_layer_attention = h * h + h * (m.n_kv_heads * d) * 2 + h * h  # Wq, Wk, Wv, Wo
    parts = {"embedding": v * h, "attention": m.n_layers * per_layer_attention, "ffn": m.n_layers * 3 * h * f,
             "norms": m.n_layers * 2 * h, "final_norm": h, "lm_head": 0 if m.tied_embeddings else v * h}
    return {**parts, "total": sum(parts.values())}


def check_ledger(m: Model) -> dict[str, int]:
    got = llama_param_ledger(*args_of(m))
    assert_named_parts(got, oracle(m), f"llama_param_ledger{args_of(m)}", total="total")
    return got


# ---- llama_param_ledger -------------------------------------------------------------------------------


@grade(llama_param_ledger, "correctness", points=3,
       hint="Per layer: which matrices shrink with fewer KV heads, and how many RMSNorm vectors are there?")
@pytest.mark.parametrize("name", sorted(MODELS))
def test_ledger_released_models(name):
    """Each part for LLaMA-2-7B (attention 32 × 67 108 864, FFN 32 × 135 266 304), LLaMA-3-8B and -70B."""
    m = MODELS[name]
    got = check_ledger(m)
    assert_exact(got["total"], m.n_params, f"llama_param_ledger({m.name})['total']", why="the released count")


@grade(llama_param_ledger, "correctness", points=2,
       hint="With tied embeddings the LM head is the embedding matrix: count it once.")
@given(m=configs())
def test_ledger_any_config(m):
    """Every part for any LLaMA-shaped config, tied or not."""
    check_ledger(m)


@grade(llama_param_ledger, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
@pytest.mark.parametrize("args, name", [((4096, 32, 11008, 32000, 30, 30), "n_heads"),
                                        ((4096, 32, 11008, 32000, 32, 5), "n_kv_heads"),
                                        ((4096.0, 32, 11008, 32000, 32, 32), "hidden"),
                                        ((4096, 0, 11008, 32000, 32, 32), "n_layers")])
def test_ledger_rejects_bad_arguments(args, name):
    """Heads that do not divide hidden, KV heads that do not divide heads, float or zero sizes raise ValueError."""
    assert_rejects(llama_param_ledger, args, name)


# ---- llama_params ------------------------------------------------------------------------------------


@grade(llama_params, "correctness", points=3,
       hint="Embedding + L × (attention + FFN + 2 norms) + final norm + LM head.")
def test_params_released_models():
    """LLaMA-2-7B 6 738 415 616 (L08 §6.3); LLaMA-3-8B 8 030 261 248 (L26); LLaMA-3-70B 70 553 706 496."""
    for m in MODELS.values():
        assert_exact(llama_params(*args_of(m)), m.n_params, f"llama_params({m.name})")


@grade(llama_params, "correctness", points=2,
       hint="Tied embeddings share one vocab × hidden matrix between the input and the LM head.")
@given(m=configs())
def test_params_any_config(m):
    """The total for any config; tying removes exactly vocab × hidden."""
    assert_exact(llama_params(*args_of(m)), oracle(m)["total"], f"llama_params{args_of(m)}")
    untied = llama_params(*args_of(m)[:6], tied_embeddings=False)
    tied = llama_params(*args_of(m)[:6], tied_embeddings=True)
    assert_exact(untied - tied, m.vocab * m.hidden, f"llama_params{args_of(m)[:6]}: untied - tied",
                 why="tying removes the LM head's vocab × hidden")


@grade(llama_params, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
@pytest.mark.parametrize("args, name", [((4096, 32, 11008, 32000, 30, 30), "n_heads"),
                                        ((4096, 32, 11008, -1, 32, 32), "vocab"),
                                        ((4096, 32, 11008.0, 32000, 32, 32), "ffn_hidden")])
def test_params_rejects_bad_arguments(args, name):
    """Heads that do not divide hidden, negative or float sizes raise ValueError naming the argument."""
    assert_rejects(llama_params, args, name)


# ---- kv_bytes_per_token -------------------------------------------------------------------------------


@grade(kv_bytes_per_token, "correctness", points=3,
       hint="One K vector and one V vector per layer per KV head: exactly one factor of 2.")
def test_kv_worked_examples():
    """fp16: LLaMA-2-7B 524 288 B (512 KiB; × 4096 tokens = 2 GiB, × 32 sequences = 64 GiB); LLaMA-3-70B 327 680 B."""
    for key, want in [("llama-2-7b", 524_288), ("llama-3-8b", 131_072), ("llama-3-70b", 327_680)]:
        m = MODELS[key]
        assert_exact(kv_bytes_per_token(m.n_layers, m.n_kv_heads, m.head_dim, 2), want, f"kv_bytes_per_token({m.name})",
                     unit="B")
    per_token = kv_bytes_per_token(32, 32, 128)
    assert_exact(per_token * 4096, 2 * GiB, "kv_bytes_per_token(32, 32, 128) × 4096 tokens",
                 why="LLaMA-2-7B: 2 GiB per 4096 tokens; elem_bytes defaults to 2", unit="B")
    assert_exact(per_token * 4096 * 32, 64 * GiB, "kv_bytes_per_token(32, 32, 128) × 4096 tokens × 32 sequences",
                 unit="B")


@grade(kv_bytes_per_token, "correctness", points=2,
       hint="Fewer KV heads, proportionally fewer bytes: MHA 32 → GQA 8 → MQA 1.")
@given(layers=st.integers(1, 200), kv=st.integers(1, 128), d=st.integers(1, 512), elem=st.sampled_from([1, 2, 4]))
def test_kv_closed_form(layers, kv, d, elem):
    """2 · L · H_kv · d · elem_bytes for any config (the GQA table: S 4096, B 16 → 32/8/4/1 GiB for H_kv 32/8/4/1)."""
    assert_exact(kv_bytes_per_token(layers, kv, d, elem), 2 * layers * kv * d * elem,
                 f"kv_bytes_per_token({layers}, {kv}, {d}, {elem})", unit="B")
    table = {h_kv: kv_bytes_per_token(32, h_kv, 128) * 4096 * 16 // GiB for h_kv in (32, 8, 4, 1)}
    assert table == {32: 32, 8: 8, 4: 4, 1: 1}, f"GQA table in GiB: {table}"


@grade(kv_bytes_per_token, "correctness", points=1,
       hint="Raise ValueError naming the argument; element sizes are int bytes.", validation=True)
@pytest.mark.parametrize("args, name", [((0, 8, 128, 2), "n_layers"), ((32, 0, 128, 2), "n_kv_heads"),
                                        ((32, 8, -128, 2), "head_dim"), ((32, 8, 128, 0.5), "elem_bytes")])
def test_kv_rejects_bad_arguments(args, name):
    """Zero or negative sizes and fractional element sizes raise ValueError naming the argument."""
    assert_rejects(kv_bytes_per_token, args, name)


# ---- block_shapes -----------------------------------------------------------------------------------


def shapes_oracle(b: int, s: int, m: Model) -> dict[str, tuple[int, ...]]:
    h, d = m.hidden, m.hidden // m.n_heads
    kv = (b, m.n_kv_heads, s, d)
    return {"x": (b, s, h), "q": (b, m.n_heads, s, d), "k": kv, "v": kv, "scores": (b, m.n_heads, s, s),
            "attn_out": (b, s, h), "gate": (b, s, m.ffn_hidden), "up": (b, s, m.ffn_hidden), "down": (b, s, h)}


def check_shapes(b: int, s: int, m: Model) -> None:
    got = block_shapes(b, s, m.hidden, m.n_heads, m.n_kv_heads, m.ffn_hidden)
    what = f"block_shapes({b}, {s}, {m.hidden}, {m.n_heads}, {m.n_kv_heads}, {m.ffn_hidden})"
    want = shapes_oracle(b, s, m)
    assert isinstance(got, dict) and set(want) <= set(got), f"{what}: keys {sorted(got)}, expected {sorted(want)}"
    for op, shape in want.items():
        assert tuple(got[op]) == shape, f"{what}[{op!r}] = {got[op]!r}, expected {shape}"


@grade(block_shapes, "correctness", points=2,
       hint="After view and transpose(1, 2) the head axis comes before the sequence axis.")
def test_shapes_llama_blocks():
    """LLaMA-2-7B with B = 2, S = 2048 (L08's table), and LLaMA-3-8B's GQA block."""
    check_shapes(2, 2048, LLAMA2_7B)
    check_shapes(2, 2048, MODELS["llama-3-8b"])


@grade(block_shapes, "correctness", points=2,
       hint="Which tensors have n_kv_heads heads, and which have one S×S matrix per query head?")
@given(b=st.integers(1, 8), s=st.integers(1, 4096), m=configs())
def test_shapes_any_config(b, s, m):
    """Every op's shape for any batch, length and config."""
    check_shapes(b, s, m)


@grade(block_shapes, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
@pytest.mark.parametrize("args, name", [((0, 16, 64, 4, 2, 128), "batch"), ((2, 16, 64, 4, 3, 128), "n_kv_heads"),
                                        ((2, 16, 64, 5, 5, 128), "n_heads"), ((2, 16.0, 64, 4, 2, 128), "seq_len")])
def test_shapes_rejects_bad_arguments(args, name):
    """Zero or float sizes and head counts that do not divide raise ValueError naming the argument."""
    assert_rejects(block_shapes, args, name)
