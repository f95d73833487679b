"""L41 · RLHF static memory by algorithm, LoRA parameter counts, GAE and GRPO advantages."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grader.constants import MODELS
from grader.kit import assert_exact, assert_number, assert_parts, assert_rejects, grade, learner

UNIT = "l41_post_training"
rlhf_static_bytes = learner(UNIT, "post_training", "rlhf_static_bytes")
lora_params = learner(UNIT, "post_training", "lora_params")
gae_advantages = learner(UNIT, "post_training", "gae_advantages")
grpo_advantages = learner(UNIT, "post_training", "grpo_advantages")

PER_PARAM = {"actor": 16, "critic": 16, "reference": 2, "reward": 2}
MODELS_OF = {
    "sft": ("actor",),
    "ppo": ("actor", "critic", "reference", "reward"),
    "dpo": ("actor", "reference"),
    "grpo": ("actor", "reference"),
}
finite = st.floats(-100, 100, allow_nan=False)
ABS = 1e-9  # advantages are sums of differences that cancel near 0: an absolute slack beside the relative 1e-9


def assert_named_parts(got: object, want: dict, what: str, **kw) -> None:
    """assert_parts on the keys the contract names: an extra key in the learner's dict is not a mistake."""
    assert_parts({k: got[k] for k in want if k in got} if isinstance(got, dict) else got, want, what, **kw)


def expected_models(algorithm: str, frozen_reference: bool) -> tuple[str, ...]:
    return tuple(m for m in MODELS_OF[algorithm] if frozen_reference or m != "reference")


def check_rlhf(got: object, n: int, algorithm: str, frozen_reference: bool) -> None:
    call = f"rlhf_static_bytes({n:_}, {algorithm!r}, frozen_reference={frozen_reference})"
    want = {model: PER_PARAM[model] * n for model in expected_models(algorithm, frozen_reference)}
    if isinstance(got, dict) and set(got) == {*want, "total"}:  # a wrong model first, in bytes per parameter
        for model, value in want.items():
            if type(got[model]) is int and got[model] != value:
                frozen = "frozen: bf16 weights only" if PER_PARAM[model] == 2 else "trained: weights, gradients, Adam"
                seen = f"{got[model] / n:g} B/param" if n else "not 0 for Ψ = 0"
                assert_exact(got[model], value, f"{call}[{model!r}]", unit="B",
                             why=f"{PER_PARAM[model]} B/param × Ψ, {frozen}; yours is {seen}")
    assert_named_parts(got, {**want, "total": sum(want.values())}, call, total="total", unit="B")


# ---- rlhf_static_bytes -------------------------------------------------------------------------


@grade(rlhf_static_bytes, "correctness", points=3,
       hint="Which models are trained (weights, gradients, Adam) and which only run inference?")
def test_rlhf_worked_numbers():
    """70B: PPO 36 B/param = 2.52 TB; DPO 18 → 1.26 TB; GRPO 18 with a resident reference, 16 without; SFT 16."""
    n = 70_000_000_000
    for algorithm, frozen, total in [
        ("ppo", True, 2520 * 10**9),
        ("dpo", True, 1260 * 10**9),
        ("grpo", True, 1260 * 10**9),
        ("grpo", False, 1120 * 10**9),
        ("sft", True, 1120 * 10**9),
    ]:
        got = rlhf_static_bytes(n, algorithm, frozen_reference=frozen)
        check_rlhf(got, n, algorithm, frozen)
        assert_exact(got["total"], total, f"rlhf_static_bytes(70B, {algorithm!r}, frozen_reference={frozen})['total']",
                     unit="B")
    assert_exact(rlhf_static_bytes(n, "ppo")["total"], 2520 * 10**9, "rlhf_static_bytes(70B, 'ppo')['total']",
                 why="2.52 TB: the reference is resident by default", unit="B")


@grade(rlhf_static_bytes, "correctness", points=2,
       hint="One line per resident model; the reference only when frozen_reference is True.")
@given(n=st.integers(0, 10**12), algorithm=st.sampled_from(sorted(MODELS_OF)), frozen=st.booleans())
def test_rlhf_any_size(n, algorithm, frozen):
    check_rlhf(rlhf_static_bytes(n, algorithm, frozen_reference=frozen), n, algorithm, frozen)


@grade(rlhf_static_bytes, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
@pytest.mark.parametrize(
    "args, name",
    [
        ((7e10, "ppo"), "n_params"),
        ((-1, "dpo"), "n_params"),
        ((10**9, "rlhf"), "algorithm"),
        ((10**9, "grpo", "yes"), "frozen_reference"),
    ],
)
def test_rlhf_rejects_bad_arguments(args, name):
    assert_rejects(rlhf_static_bytes, args, name)


# ---- lora_params -------------------------------------------------------------------------------

L70 = MODELS["llama-3-70b"]


@grade(lora_params, "correctness", points=3, hint="A is r × d_in and B is d_out × r: is W_v square in a GQA model?")
def test_lora_worked_numbers():
    """Course: 4·L·h·r = 41,943,040 (square W_q, W_v); LLaMA-3-70B's W_v maps 8192 → 1024: 32,768,000."""
    h, kv = L70.hidden, L70.n_kv_heads * L70.head_dim
    for shapes, want in [
        ([(h, h), (h, h)], 41_943_040),
        ([(h, h), (h, kv)], 32_768_000),
        ([(h, h), (h, kv), (h, kv), (h, h)], 65_536_000),
    ]:
        assert_exact(lora_params(L70.n_layers, shapes, 16), want, f"lora_params(80, {shapes}, rank=16)")


@grade(lora_params, "correctness", points=2, hint="Per target and layer: r·d_in + d_out·r.")
@given(
    layers=st.integers(0, 128),
    shapes=st.lists(st.tuples(st.integers(1, 2**14), st.integers(1, 2**14)), max_size=7),
    rank=st.integers(1, 256),
)
def test_lora_closed_form(layers, shapes, rank):
    want = layers * sum(rank * (a + b) for a, b in shapes)
    assert_exact(lora_params(layers, shapes, rank), want, f"lora_params({layers}, {shapes}, {rank})",
                 why="layers · Σ rank·(d_in + d_out)")


@grade(lora_params, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
@pytest.mark.parametrize(
    "args, name",
    [
        ((80, [(8192, 8192)], 0), "rank"),
        ((80, [(8192,)], 16), "target_shapes"),
        ((80, [(8192, 0)], 16), "target_shapes"),
        ((-1, [(8, 8)], 16), "n_layers"),
    ],
)
def test_lora_rejects_bad_arguments(args, name):
    assert_rejects(lora_params, args, name)


# ---- gae_advantages ----------------------------------------------------------------------------


def gae(rewards: list[float], values: list[float], gamma: float, lam: float) -> list[float]:
    """The definition, term by term: A_t = Σ_l (γλ)^l δ_{t+l}."""
    deltas = [r + gamma * values[t + 1] - values[t] for t, r in enumerate(rewards)]
    return [sum((gamma * lam) ** k * d for k, d in enumerate(deltas[t:])) for t in range(len(rewards))]


def assert_list(got: object, want: list[float], call: str) -> None:
    assert isinstance(got, list) and len(got) == len(want), (
        f"{call}: expected a list of {len(want)} floats, got {got!r}"
    )
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        assert_number(g, w, f"{call}[{i}]", abs_tol=ABS)


@grade(gae_advantages, "correctness", points=3,
       hint="δ_t uses V(s_{t+1}); the recursion discounts by γλ, not by γ alone.")
def test_gae_worked_example():
    """Rewards [0, 0, 0, 1], V = [0.5, 0.6, 0.7, 0.8, 0], γ 0.99, λ 0.95 → [0.429226, 0.356434, 0.2801, 0.2]."""
    assert_list(
        gae_advantages([0, 0, 0, 1], [0.5, 0.6, 0.7, 0.8, 0.0], 0.99, 0.95),
        [0.429226224025, 0.35643405, 0.2801, 0.2],
        "gae_advantages([0, 0, 0, 1], ..., 0.99, 0.95)",
    )
    assert_list(
        gae_advantages([1, 1], [0, 0, 10], 0.5, 1.0), [1 + 0.5 + 2.5, 1 + 5], "gae_advantages bootstrap V(s_T)=10"
    )


@grade(gae_advantages, "correctness", points=2,
       hint="λ = 0 must give the TD residuals δ_t; λ = 1 the discounted return minus V(s_t).")
@given(
    rv=st.integers(0, 30).flatmap(
        lambda t: st.tuples(st.lists(finite, min_size=t, max_size=t), st.lists(finite, min_size=t + 1, max_size=t + 1))
    ),
    gamma=st.floats(0, 1),
    lam=st.floats(0, 1),
)
def test_gae_closed_form(rv, gamma, lam):
    rewards, values = rv
    assert_list(
        gae_advantages(rewards, values, gamma, lam),
        gae(rewards, values, gamma, lam),
        f"gae_advantages({rewards}, {values}, {gamma}, {lam})",
    )


@grade(gae_advantages, "correctness", points=1,
       hint="Raise ValueError naming the argument: how many values does a T-step trajectory need?", validation=True)
@pytest.mark.parametrize(
    "args, name",
    [
        (([0, 1], [0, 0], 0.99, 0.95), "values"),
        (([0, 1], [0, 0, 0], 1.5, 0.95), "gamma"),
        (([0, 1], [0, 0, 0], 0.99, -0.1), "lam"),
        (([0, float("nan")], [0, 0, 0], 0.99, 0.95), "rewards"),
    ],
)
def test_gae_rejects_bad_arguments(args, name):
    assert_rejects(gae_advantages, args, name)


# ---- grpo_advantages ---------------------------------------------------------------------------


def grpo(rewards: list[float], g: int, eps: float) -> list[float]:
    out = []
    for start in range(0, len(rewards), g):
        group = rewards[start : start + g]
        mean = math.fsum(group) / g
        std = math.sqrt(math.fsum((x - mean) ** 2 for x in group) / g)
        out += [0.0 if std + eps == 0 else (x - mean) / (std + eps) for x in group]
    return out


@grade(grpo_advantages, "correctness", points=3,
       hint="Population std divides by G, not G − 1; and each prompt's group is normalized on its own.")
def test_grpo_worked_example():
    """[1, 0, 0, 1]: mean 0.5, population std 0.5 → [1, −1, −1, 1]; a second group of equal rewards → zeros."""
    assert_list(
        grpo_advantages([1, 0, 0, 1], 4, eps=0.0), [1.0, -1.0, -1.0, 1.0], "grpo_advantages([1, 0, 0, 1], 4, eps=0)"
    )
    assert_list(
        grpo_advantages([1, 0, 0, 1, 3, 3, 3, 3], 4, eps=0.0),
        [1.0, -1.0, -1.0, 1.0, 0.0, 0.0, 0.0, 0.0],
        "grpo_advantages([1, 0, 0, 1, 3, 3, 3, 3], 4, eps=0)",
    )
    a = 0.5 / (0.5 + 1e-6)
    assert_list(grpo_advantages([1, 0, 0, 1], 4), [a, -a, -a, a], "grpo_advantages([1, 0, 0, 1], 4) with eps=1e-6")


@grade(grpo_advantages, "correctness", points=2,
       hint="Each group's advantages sum to zero: are you normalizing per group, or over the whole batch?")
@given(g=st.integers(1, 8), n_groups=st.integers(1, 5), data=st.data(), eps=st.sampled_from([0.0, 1e-6, 1e-4]))
def test_grpo_closed_form(g, n_groups, data, eps):
    rewards = data.draw(
        st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, -1.0]), min_size=g * n_groups, max_size=g * n_groups)
    )
    got = grpo_advantages(rewards, g, eps=eps)
    assert_list(got, grpo(rewards, g, eps), f"grpo_advantages({rewards}, {g}, eps={eps})")


@grade(grpo_advantages, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
@pytest.mark.parametrize(
    "args, kwargs, name",
    [
        (([1, 0, 0], 2), {}, "rewards"),
        (([1, 0], 0), {}, "group_size"),
        (([1, 0], 2), {"eps": -1.0}, "eps"),
        (([1, 0], 2.0), {}, "group_size"),
    ],
)
def test_grpo_rejects_bad_arguments(args, kwargs, name):
    assert_rejects(grpo_advantages, args, name, kwargs)
