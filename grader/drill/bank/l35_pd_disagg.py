"""L35 · Prefill/decode disaggregation: KV bytes and time on the wire, layer-wise overlap, the P:D ratio, routing."""

from __future__ import annotations

import random

from grader.drill.bank._kit import Params, Step, T, shape
from grader.i18n import N_, _

FN = ("l35_pd_disagg", "disagg")
LINKS = {
    N_("400 Gb/s RDMA (45 GB/s effective)"): 45e9,
    N_("100 Gb/s network (11 GB/s)"): 11e9,
    N_("8 × 400 Gb/s rails (360 GB/s)"): 360e9,
}


def _kv(rng: random.Random) -> Params:
    p = shape(rng, {"tokens": rng.choice([1024, 4096, 8192, 32768, 131072]), "dtype": rng.choice(["fp16", "fp8"])})
    p["cached"] = rng.choice([0, 0, p["tokens"] // 2])
    link = rng.choice(sorted(LINKS))
    return {**p, "e": 2 if p["dtype"] == "fp16" else 1, "link": link, "bw": LINKS[link]}


def _kv_prompt(p: Params) -> str:
    """The transfer question; a decode node with nothing cached (a third of the draws, or two: the plain case) is
    said so, never "the first 0 tokens' KV"."""
    if p["cached"]:
        text = _(
            "{model} ({layers} layers, {kv} KV heads of {head_dim}), {dtype} KV: the prefill node "
            "hands a {tokens}-token prompt to a decode node that already holds the first {cached} "
            "tokens' KV. How many bytes cross the network?"
        )
    else:
        text = _(
            "{model} ({layers} layers, {kv} KV heads of {head_dim}), {dtype} KV: the prefill node "
            "hands a {tokens}-token prompt to a decode node that holds none of its KV yet (no prefix "
            "cached). How many bytes cross the network?"
        )
    return text.format(**{k: _(v) if isinstance(v, str) else v for k, v in p.items()})


def _kv_steps(p: Params) -> list[Step]:
    return [
        Step("=", N_("per token: 2 · L · H_kv · d · bytes"), 2 * p["layers"] * p["kv"] * p["head_dim"] * p["e"], "B"),
        Step("×", N_("tokens the decode node does not hold yet"), p["tokens"] - p["cached"]),
    ]


def _layer(rng: random.Random) -> Params:
    return {
        "layers": rng.choice([32, 80]),
        "tc_ms": rng.choice([1.0, 2.0, 3.5, 5.0]),
        "mib": rng.choice([16, 64, 128]),
        "bw_gb": rng.choice([12, 25, 48, 100]),
    }


def _layer_steps(p: Params) -> list[Step]:
    tx, tc, n = p["mib"] * 2**20 / (p["bw_gb"] * 1e9), p["tc_ms"] / 1000, p["layers"]
    if tx <= tc:
        return [
            Step("=", N_("each layer's transfer hides behind the next layer's compute: only the last shows"), tx, "s")
        ]
    return [
        Step("=", N_("the transfers queue up: first layer's compute"), tc, "s"),
        Step("+", N_("L transfers back to back"), n * tx, "s"),
        Step("-", N_("L layers of compute"), n * tc, "s"),
    ]


def _ratio(rng: random.Random) -> Params:
    return {
        "lin": rng.choice([500, 1000, 2000, 8000]),
        "lout": rng.choice([100, 500, 1000, 4000]),
        "tp": rng.choice([4000, 8000, 16000]),
        "td": rng.choice([250, 500, 1000, 2000]),
    }


def _pick(rng: random.Random) -> Params:
    n = rng.choice([2, 3, 4])
    return {
        "hits": [rng.choice([0.0, 0.25, 0.5, 0.8]) for _ in range(n)],
        "queues": [rng.choice([0.05, 0.1, 0.3, 0.6]) for _ in range(n)],
        "d": rng.choice([0.2, 0.4, 0.8]),
        "n": n,
    }


def _pick_label(p: Params) -> str:
    return "; ".join(
        _("instance {i}: {h:.0%} cached, {q:g} s queued").format(i=i, h=h, q=q)
        for i, (h, q) in enumerate(zip(p["hits"], p["queues"], strict=True))
    )


TEMPLATES = [
    T(
        "l35.kv_transfer_bytes",
        (*FN, "kv_transfer_bytes"),
        "serving",
        2,
        35,
        _kv_prompt,
        _kv,
        lambda p, fn: fn(p["tokens"], p["layers"], p["kv"], p["head_dim"], p["e"], p["cached"]),
        _kv_steps,
        "B",
        ("GiB", "GB", "MB", "B"),
        source=N_("DistServe / Mooncake: the KV cache moves from prefill to decode"),
    ),
    T(
        "l35.kv_transfer_seconds",
        (*FN, "kv_transfer_seconds"),
        "communication",
        2,
        35,
        N_(
            "{model} ({layers} layers, {kv} KV heads of {head_dim}), {dtype} KV, a {tokens}-token "
            "prompt (nothing cached on the decode side) over {link}: how long does the KV "
            "transfer take (no latency term)?"
        ),
        lambda rng: {**_kv(rng), "cached": 0},
        lambda p, fn: fn(2 * p["layers"] * p["kv"] * p["head_dim"] * p["e"] * p["tokens"], p["bw"]),
        lambda p: [*_kv_steps(p), Step("÷", N_("link bandwidth"), p["bw"], "B/s")],
        "s",
        ("ms", "s"),
    ),
    T(
        "l35.layerwise_exposed",
        (*FN, "layerwise_exposed_seconds"),
        "serving",
        3,
        35,
        N_(
            "Prefill of {layers} layers at {tc_ms:g} ms each; each layer's KV is {mib} MiB, sent "
            "layer by layer over one {bw_gb} GB/s link as soon as the layer is computed. How much "
            "transfer time is left after the prefill ends?"
        ),
        _layer,
        lambda p, fn: fn(p["layers"], p["tc_ms"] / 1000, p["mib"] * 2**20, p["bw_gb"] * 1e9)["layerwise_s"],
        _layer_steps,
        "s",
        ("ms", "s"),
        rtol=0.005,
        source=N_("layer-wise KV transfer (Mooncake, DistServe)"),
    ),
    T(
        "l35.pd_ratio",
        (*FN, "pd_ratio"),
        "serving",
        2,
        35,
        N_(
            "Prompts of {lin} tokens, outputs of {lout}; a prefill instance processes {tp} "
            "tokens/s, a decode instance {td}. How many decode instances per prefill instance "
            "keep both busy?"
        ),
        _ratio,
        lambda p, fn: fn(p["lin"], p["lout"], p["tp"], p["td"]),
        lambda p: [Step("=", N_("L_out / L_in"), p["lout"] / p["lin"]), Step("×", N_("Θ_P / Θ_D"), p["tp"] / p["td"])],
        "1",
        rtol=0.005,
    ),
    T(
        "l35.conductor_pick",
        (*FN, "conductor_pick"),
        "serving",
        2,
        35,
        lambda p: _(
            "A {d:g} s prefill (whole prompt) can go to: {pick_label_p}. Score = (1 − cached)·D + "
            "queue; TTFT SLO 1 s. Which instance does the conductor pick (or does it reject with "
            "429)?"
        ).format(d=p["d"], pick_label_p=_pick_label(p)),
        _pick,
        lambda p, fn: (lambda i: "reject (429)" if i is None else f"instance {i}")(
            fn(p["hits"], p["queues"], p["d"], 1.0, 1.0)
        ),
        lambda p: [
            Step(
                "=",
                N_("instance {i}: (1 − {h:g})·{d:g} + {q:g}"),
                (1 - h) * p["d"] + q,
                args={"i": i, "h": h, "d": p["d"], "q": q},
            )
            for i, (h, q) in enumerate(zip(p["hits"], p["queues"], strict=True))
        ],
        kind="choice",
        options=lambda p: [f"instance {i}" for i in range(p["n"])] + [N_("reject (429)")],
        source=N_("Mooncake (Qin et al. 2024): KV-cache-centric scheduling"),
    ),
]
