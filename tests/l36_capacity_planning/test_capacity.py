"""L36 · KV per token per GPU, the KV pool, B_max, and cluster sizing with Little's law."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grader.constants import GB, GPUS, MODELS, GiB
from grader.kit import assert_exact, assert_number, assert_rejects, grade, learner

UNIT = "l36_capacity_planning"
kv_bytes_per_token_per_gpu = learner(UNIT, "capacity", "kv_bytes_per_token_per_gpu")
kv_pool_bytes = learner(UNIT, "capacity", "kv_pool_bytes")
b_max = learner(UNIT, "capacity", "b_max")
cluster_size = learner(UNIT, "capacity", "cluster_size")

L70 = MODELS["llama-3-70b"]  # Qwen2.5-72B has the same KV geometry: 80 layers, 8 KV heads of 128


# ---- kv_bytes_per_token_per_gpu ----------------------------------------------------------------


@grade(kv_bytes_per_token_per_gpu, "correctness", points=3,
       hint="How many KV heads does one GPU hold when there are more GPUs than KV heads?")
def test_kv_per_gpu_worked_numbers():
    """Course: tiny (L2, 2 KV heads of 64, fp16) → 1024 B; 70B TP8 → 40,960 B; TP16 keeps 40,960 (heads replicated)."""
    assert_exact(kv_bytes_per_token_per_gpu(2, 2, 64, 1), 1024, "kv_bytes_per_token_per_gpu(2, 2, 64, tp=1)", unit="B")
    for tp, want in [(1, 327_680), (2, 163_840), (8, 40_960), (16, 40_960), (32, 40_960)]:
        assert_exact(
            kv_bytes_per_token_per_gpu(L70.n_layers, L70.n_kv_heads, L70.head_dim, tp),
            want,
            f"kv_bytes_per_token_per_gpu(80, 8, 128, tp={tp})",
            unit="B",
        )
    assert_exact(
        kv_bytes_per_token_per_gpu(80, 8, 128, 8, elem_bytes=1), 20_480, "kv_bytes_per_token_per_gpu(70B, TP8, fp8)",
        unit="B",
    )


@grade(kv_bytes_per_token_per_gpu, "correctness", points=2,
       hint="K and V once each, for this GPU's heads only: 2·L·max(1, H_kv/TP)·d·b.")
@given(
    layers=st.integers(0, 128),
    heads=st.sampled_from([1, 2, 4, 8, 16, 32, 64]),
    dim=st.sampled_from([64, 128, 256]),
    tp=st.sampled_from([1, 2, 4, 8, 16, 32, 64]),
    e=st.sampled_from([1, 2, 4]),
)
def test_kv_per_gpu_closed_form(layers, heads, dim, tp, e):
    want = 2 * layers * max(1, heads // tp) * dim * e
    got = kv_bytes_per_token_per_gpu(layers, heads, dim, tp, e)
    assert_exact(got, want, f"kv_bytes_per_token_per_gpu({layers}, {heads}, {dim}, {tp}, {e})", unit="B",
                 why="2·L·max(1, H_kv/TP)·d·b")
    assert got * min(tp, heads) == 2 * layers * heads * dim * e, "the GPUs of one replica hold the whole cache once"


@grade(kv_bytes_per_token_per_gpu, "correctness", points=1,
       hint="Raise ValueError naming the argument: can 8 KV heads be split over 3 GPUs?", validation=True)
@pytest.mark.parametrize(
    "args, name",
    [
        ((80, 8, 128, 3), "tp"),
        ((80, 8, 128, 0), "tp"),
        ((80, 0, 128, 1), "n_kv_heads"),
        ((80, 8, 128.0, 8), "head_dim"),
        ((-1, 8, 128, 8), "n_layers"),
    ],
)
def test_kv_per_gpu_rejects_bad_arguments(args, name):
    assert_rejects(kv_bytes_per_token_per_gpu, args, name)


# ---- kv_pool_bytes -----------------------------------------------------------------------------


@grade(kv_pool_bytes, "correctness", points=3,
       hint="gpu_memory_utilization is a share of the whole GPU: apply it before subtracting anything.")
def test_pool_worked_numbers():
    """Course: 80e9 × 0.90 − 18e9 − 4e9 = 50e9 B.

    H100 80 GiB, LLaMA-3-70B TP8 weights, 4 GiB runtime: 55,376,017,408 B.
    """
    assert_exact(kv_pool_bytes(80 * GB, 0.9, 18 * GB, 4 * GB), 50 * GB, "kv_pool_bytes(80e9, 0.9, 18e9, 4e9)", unit="B")
    weights = L70.n_params * 2 // 8
    assert_exact(
        kv_pool_bytes(GPUS["H100-SXM"].hbm_bytes, 0.9, weights, 4 * GiB),
        55_376_017_408,
        f"kv_pool_bytes(80 GiB, 0.9, {weights:_}, 4 GiB)",
        unit="B",
    )


@grade(kv_pool_bytes, "correctness", points=2,
       hint="floor(V·α) − weights − runtime: the buffer is what α leaves out of the whole GPU.")
@given(
    gpu=st.sampled_from(sorted(GPUS)), util=st.floats(0.5, 1.0), w=st.integers(0, 40 * GB), rt=st.integers(0, 8 * GB)
)
def test_pool_closed_form(gpu, util, w, rt):
    total = GPUS[gpu].hbm_bytes
    want = math.floor(total * util) - w - rt
    call = f"kv_pool_bytes({total}, {util}, {w}, {rt})"
    if want <= 0:  # no pool left: any ValueError here; the bad-argument table checks the name
        with pytest.raises(ValueError):
            got = kv_pool_bytes(total, util, w, rt)
            pytest.fail(f"{call} returned {got!r}: weights and runtime leave no pool ({want:,} B), raise ValueError")
        return
    got = kv_pool_bytes(total, util, w, rt)
    if type(got) is int and abs(got - want) == 1:  # floor(V·α) of a float product may land either side
        return
    assert_exact(got, want, call, why="floor(V·α) − weights − runtime", unit="B")


@grade(kv_pool_bytes, "correctness", points=1,
       hint="Raise ValueError naming the argument; and when the weights leave no pool at all?", validation=True)
@pytest.mark.parametrize(
    "args, name",
    [
        ((80 * GB, 1.5, GB, GB), "mem_util"),
        ((80 * GB, 0.0, GB, GB), "mem_util"),
        ((80.0e9, 0.9, GB, GB), "gpu_bytes"),
        ((80 * GB, 0.9, -GB, GB), "weight_bytes"),
        ((80 * GB, 0.9, 70 * GB, 4 * GB), "weight_bytes"),
    ],
)
def test_pool_rejects_bad_arguments(args, name):
    assert_rejects(kv_pool_bytes, args, name)


# ---- b_max -------------------------------------------------------------------------------------


@grade(b_max, "correctness", points=3, hint="Is 40 KB per token 40,000 B or 40,960 B? And can half a request fit?")
def test_b_max_worked_numbers():
    """Tiny → 2; Qwen2.5-72B TP8 at 40,960 B/token, 50 GB pool: S=2000 → 610, S=17000 → 71, S=1600 → 762.

    The course prints 625 / 73 / 781: it takes 40 KB as 40,000 B (erratum #3).
    """
    assert_exact(b_max(2**20, 1024, 512), 2, "b_max(1 MiB, 1024, 512)")
    for s, want in [(2000, 610), (17_000, 71), (1600, 762)]:
        assert_exact(b_max(50 * GB, 40_960, s), want, f"b_max(50e9, 40960, {s})")


@grade(b_max, "correctness", points=2, hint="Whole requests only: round down.")
@given(pool=st.integers(0, 200 * GB), kv=st.integers(1, 2**20), s=st.integers(1, 2**18))
def test_b_max_closed_form(pool, kv, s):
    got = b_max(pool, kv, s)
    assert_exact(got, pool // (kv * s), f"b_max({pool}, {kv}, {s})")
    assert got * kv * s <= pool < (got + 1) * kv * s, f"b_max({pool}, {kv}, {s}) = {got}: not the most that fit"


@grade(b_max, "correctness", points=1, hint="Raise ValueError naming the argument.", validation=True)
@pytest.mark.parametrize(
    "args, name",
    [
        ((50 * GB, 0, 2000), "kv_per_token_per_gpu"),
        ((50 * GB, 40960, 0), "s_total"),
        ((50.0e9, 40960, 2000), "pool_bytes"),
        ((-1, 40960, 2000), "pool_bytes"),
    ],
)
def test_b_max_rejects_bad_arguments(args, name):
    assert_rejects(b_max, args, name)


# ---- cluster_size ------------------------------------------------------------------------------

KEYS = ("t_life_s", "concurrency", "nodes_throughput", "nodes_memory", "nodes", "gpus")


def plan(qps, s_gen, ttft, tpot, tps, node_b, gpus, headroom=1.25, dr=1.15) -> dict[str, float]:
    margin = headroom * dr
    t_life = ttft + s_gen * tpot
    conc = qps * t_life
    thr = math.ceil(qps * s_gen / tps * margin - 1e-9)
    mem = math.ceil(math.ceil(conc / node_b - 1e-9) * margin - 1e-9)
    return {
        "t_life_s": t_life,
        "concurrency": conc,
        "nodes_throughput": thr,
        "nodes_memory": mem,
        "nodes": max(thr, mem),
        "gpus": max(thr, mem) * gpus,
    }


def check_plan(got: object, want: dict[str, float], call: str) -> None:
    assert isinstance(got, dict), f"{call}: expected a dict with keys {KEYS}, got {got!r}"
    for key in KEYS:
        assert key in got, f"{call}: missing key {key!r}"
        if isinstance(want[key], int):
            assert_exact(got[key], want[key], f"{call}[{key!r}]")
        else:
            assert_number(got[key], want[key], f"{call}[{key!r}]")


@grade(cluster_size, "correctness", points=3,
       hint="A request holds memory from arrival to its last token: what is T_life? Both sides get the margins.")
def test_cluster_worked_numbers():
    """Course Copilot case → T_life 12.6 s, 504 in flight, 15 nodes / 120 GPUs (compute-bound).

    Long documents (71 per node) → memory-bound: 6 nodes.
    """
    want = {"t_life_s": 12.6, "concurrency": 504.0, "nodes_throughput": 15, "nodes_memory": 2, "nodes": 15, "gpus": 120}
    check_plan(cluster_size(40, 400, 0.6, 0.03, 1600, 762, 8), want, "cluster_size(40, 400, 0.6, 0.03, 1600, 762, 8)")
    want = {"t_life_s": 52.0, "concurrency": 260.0, "nodes_throughput": 5, "nodes_memory": 6, "nodes": 6, "gpus": 48}
    check_plan(cluster_size(5, 1000, 2.0, 0.05, 1600, 71, 8), want, "cluster_size(5, 1000, 2.0, 0.05, 1600, 71, 8)")


@grade(cluster_size, "correctness", points=2,
       hint="Take the larger side, never the sum; round up only once per side, after the margins.")
@given(
    qps=st.floats(0, 500),
    s_gen=st.integers(1, 4096),
    ttft=st.floats(0, 5),
    tpot=st.floats(0.001, 0.2),
    tps=st.floats(100, 10**5),
    node_b=st.integers(1, 2000),
    gpus=st.sampled_from([1, 4, 8]),
    headroom=st.sampled_from([1.0, 1.25, 1.35]),
    dr=st.sampled_from([1.0, 1.15, 1.2]),
)
def test_cluster_closed_form(qps, s_gen, ttft, tpot, tps, node_b, gpus, headroom, dr):
    got = cluster_size(qps, s_gen, ttft, tpot, tps, node_b, gpus, headroom=headroom, dr=dr)
    check_plan(
        got,
        plan(qps, s_gen, ttft, tpot, tps, node_b, gpus, headroom, dr),
        f"cluster_size({qps}, {s_gen}, {ttft}, {tpot}, {tps}, {node_b}, {gpus}, {headroom}, {dr})",
    )


@grade(cluster_size, "correctness", points=1, hint="Raise ValueError naming the argument: can a margin be below 1?",
       validation=True)
@pytest.mark.parametrize(
    "args, name",
    [
        ((40, 400, 0.6, 0.03, 0, 762, 8), "node_tokens_per_s"),
        ((40, 400, 0.6, 0.03, 1600, 0, 8), "node_b_max"),
        ((-1, 400, 0.6, 0.03, 1600, 762, 8), "qps"),
        ((40, 400, 0.6, 0.03, 1600, 762, 8, 0.8), "headroom"),
        ((40, 400.5, 0.6, 0.03, 1600, 762, 8), "s_gen"),
    ],
)
def test_cluster_rejects_bad_arguments(args, name):
    assert_rejects(cluster_size, args, name)
