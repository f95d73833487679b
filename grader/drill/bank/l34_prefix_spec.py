"""L34 · Speculative decoding: expected tokens per round and the speed-up."""

from __future__ import annotations

import random

from grader.drill.bank._kit import Params, Step, T
from grader.i18n import N_

FN = ("l34_prefix_spec", "spec_decode")


def _spec(rng: random.Random) -> Params:
    return {
        "alpha": rng.choice([0.42, 0.6, 0.7, 0.8, 0.84, 0.9]),
        "gamma": rng.choice([2, 3, 4, 5, 8]),
        "draft_ms": rng.choice([1.0, 1.8, 3.0, 5.0]),
        "target_ms": rng.choice([20, 24, 35, 50]),
    }


def _e(p: Params) -> float:
    return sum(p["alpha"] ** i for i in range(p["gamma"] + 1))


TEMPLATES = [
    T(
        "l34.expected_tokens",
        (*FN, "expected_tokens_per_round"),
        "serving",
        2,
        34,
        N_(
            "Speculative decoding, γ = {gamma} drafted tokens per round, each accepted with "
            "probability α = {alpha:g} independently until the first rejection. How many tokens "
            "does a round emit on average?"
        ),
        _spec,
        lambda p, fn: fn(p["alpha"], p["gamma"]),
        lambda p: [
            Step("=" if i == 0 else "+", N_("α^{i}"), p["alpha"] ** i, args={"i": i}) for i in range(p["gamma"] + 1)
        ],
        "1",
        rtol=0.005,
        source=N_("Leviathan et al. 2023: E = (1 − α^(γ+1)) / (1 − α)"),
    ),
    T(
        "l34.spec_speedup",
        (*FN, "spec_speedup"),
        "serving",
        3,
        34,
        N_(
            "Speculative decoding: α = {alpha:g}, γ = {gamma}, a draft step takes {draft_ms:g} ms "
            "and a target pass {target_ms} ms. What is the speed-up over plain decoding (one "
            "target pass per token)?"
        ),
        _spec,
        lambda p, fn: fn(p["alpha"], p["gamma"], p["draft_ms"] / 1000, p["target_ms"] / 1000)["speedup"],
        lambda p: [
            Step("=", N_("target pass per plain token"), p["target_ms"] / 1000, "s"),
            Step(
                "÷",
                N_("round: γ drafts + one target pass"),
                p["gamma"] * p["draft_ms"] / 1000 + p["target_ms"] / 1000,
                "s",
            ),
            Step("×", N_("tokens per round E"), _e(p)),
        ],
        "1",
        rtol=0.005,
        source=N_("Leviathan et al. 2023, the walltime improvement"),
    ),
    T(
        "l34.spec_tpot",
        (*FN, "spec_speedup"),
        "serving",
        2,
        34,
        N_(
            "Speculative decoding: α = {alpha:g}, γ = {gamma}, draft step {draft_ms:g} ms, target "
            "pass {target_ms} ms. What is the time per output token?"
        ),
        _spec,
        lambda p, fn: fn(p["alpha"], p["gamma"], p["draft_ms"] / 1000, p["target_ms"] / 1000)["tpot_s"],
        lambda p: [
            Step(
                "=",
                N_("round: γ drafts + one target pass"),
                p["gamma"] * p["draft_ms"] / 1000 + p["target_ms"] / 1000,
                "s",
            ),
            Step("÷", N_("tokens per round E"), _e(p)),
        ],
        "s",
        ("ms", "s"),
        rtol=0.005,
    ),
]
