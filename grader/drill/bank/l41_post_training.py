"""L41 · Post-training: the resident models of PPO / DPO / GRPO, LoRA adapters."""

from __future__ import annotations

import random

from grader.drill.bank._kit import BILLIONS, Params, Step, T
from grader.i18n import N_, _

FN = ("l41_post_training", "post_training")
MODELS = {
    "ppo": ("actor", "critic", "reward", "reference"),
    "dpo": ("actor", "reference"),
    "grpo": ("actor", "reference"),
}
TRAINED = ("actor", "critic")


def _rlhf(rng: random.Random) -> Params:
    billions = rng.choice(BILLIONS[:7])
    return {"billions": billions, "n": billions * 10**9, "alg": rng.choice(sorted(MODELS))}


def _rlhf_steps(p: Params) -> list[Step]:
    return [
        Step(
            "=" if i == 0 else "+",
            N_("{m}: {role} B × Ψ"),
            (16 if m in TRAINED else 2) * p["n"],
            "B",
            args={"m": m, "role": N_("trained, 16") if m in TRAINED else N_("frozen, 2")},
        )
        for i, m in enumerate(MODELS[p["alg"]])
    ]


def _lora(rng: random.Random) -> Params:
    targets = rng.choice(
        [
            ("q, v", [(8192, 8192), (8192, 1024)]),
            ("q, k, v, o", [(8192, 8192), (8192, 1024), (8192, 1024), (8192, 8192)]),
            (
                N_("all linear"),
                [(8192, 8192), (8192, 1024), (8192, 1024), (8192, 8192), (8192, 28672), (8192, 28672), (28672, 8192)],
            ),
        ]
    )
    return {"which": targets[0], "shapes": targets[1], "rank": rng.choice([8, 16, 64]), "layers": 80}


TEMPLATES = [
    T(
        "l41.rlhf_static",
        (*FN, "rlhf_static_bytes"),
        "memory",
        2,
        41,
        lambda p: _(
            "{alg_upper} on a {billions}B policy, every model the same size, trained models at 16 "
            "B/param (mixed-precision Adam), frozen ones in bf16: static memory of the resident "
            "models?"
        ).format(alg_upper=p["alg"].upper(), billions=p["billions"]),
        _rlhf,
        lambda p, fn: fn(p["n"], p["alg"])["total"],
        _rlhf_steps,
        "B",
        ("GB", "TB", "GiB", "B"),
        source=N_("PPO: actor + critic trained, reward + reference frozen; DPO and GRPO: no critic, no reward model"),
    ),
    T(
        "l41.lora_params_70b",
        (*FN, "lora_params"),
        "memory",
        2,
        41,
        N_(
            "LoRA of rank {rank} on the {which} projections of LLaMA-3-70B (80 layers; hidden "
            "8192, K/V project to 1024, SwiGLU 28672). How many trainable parameters?"
        ),
        _lora,
        lambda p, fn: fn(p["layers"], [tuple(s) for s in p["shapes"]], p["rank"]),
        lambda p: [
            Step("=", N_("per layer: Σ r·(d_in + d_out)"), sum(p["rank"] * (a + b) for a, b in p["shapes"])),
            Step("×", N_("layers"), p["layers"]),
        ],
        "1",
        rtol=1e-5,
        source=N_("LoRA (Hu et al. 2021)"),
    ),
]


TEMPLATES += [
    T(
        "l41.rlhf_no_reference",
        (*FN, "rlhf_static_bytes"),
        "memory",
        2,
        41,
        lambda p: _(
            "{alg_upper} on a {billions}B policy with the reference log-probabilities precomputed "
            "(no resident reference model); trained models 16 B/param, frozen 2 B/param. Static "
            "memory?"
        ).format(alg_upper=p["alg"].upper(), billions=p["billions"]),
        _rlhf,
        lambda p, fn: fn(p["n"], p["alg"], False)["total"],
        lambda p: [s for s in _rlhf_steps(p) if "reference" not in str(s.args.get("m", ""))],
        "B",
        ("GB", "TB", "GiB", "B"),
    ),
]


def _lora8(rng: random.Random) -> Params:
    which = rng.choice(
        [
            ("q, v", [(4096, 4096), (4096, 1024)]),
            ("q, k, v, o", [(4096, 4096), (4096, 1024), (4096, 1024), (4096, 4096)]),
        ]
    )
    return {"which": which[0], "shapes": which[1], "rank": rng.choice([8, 16, 32, 64]), "layers": 32}


TEMPLATES += [
    T(
        "l41.lora_params_8b",
        (*FN, "lora_params"),
        "memory",
        1,
        41,
        N_(
            "LoRA of rank {rank} on the {which} projections of LLaMA-3-8B (32 layers, hidden "
            "4096, K/V project to 1024). How many trainable parameters?"
        ),
        _lora8,
        lambda p, fn: fn(p["layers"], [tuple(s) for s in p["shapes"]], p["rank"]),
        lambda p: [
            Step("=", N_("per layer: Σ r·(d_in + d_out)"), sum(p["rank"] * (a + b) for a, b in p["shapes"])),
            Step("×", N_("layers"), p["layers"]),
        ],
        "1",
        rtol=1e-5,
    ),
]
