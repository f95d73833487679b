"""L44 · The interview whiteboard: plan memory, the plan judge, run time and cost, NCCL hang triage."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from grader.constants import GB, GPUS, GiB
from grader.kit import assert_exact, assert_number, assert_parts, assert_rejects, assert_rejects_all, grade, learner

UNIT = "l44_interview"
plan_static_bytes = learner(UNIT, "interview", "plan_static_bytes")
judge_plan = learner(UNIT, "interview", "judge_plan")
training_run = learner(UNIT, "interview", "training_run")
main_thread_stack = learner(UNIT, "interview", "main_thread_stack")
hang_call_site = learner(UNIT, "interview", "hang_call_site")
triage_hang = learner(UNIT, "interview", "triage_hang")

FIXTURES = Path(__file__).parent / "fixtures"
P405 = 405_000_000_000
H100 = GPUS["H100-SXM"]
ACT = 20 * GiB  # the lecture's "18–22 GB" of activations per GPU, rounded up


def as_list(x: object) -> object:
    """Lists and tuples alike, nested too: the contract names the items, not the sequence type."""
    return [as_list(v) for v in x] if isinstance(x, list | tuple) else x


def named_record(got: object, want: dict) -> object:
    """The keys the contract names: an extra key in the learner's dict is not a mistake."""
    return {k: got[k] for k in want if k in got} if isinstance(got, dict) else got


def assert_named_parts(got: object, want: dict, what: str, **kw) -> None:
    """assert_parts on the keys the contract names: an extra key in the learner's dict is not a mistake."""
    assert_parts({k: got[k] for k in want if k in got} if isinstance(got, dict) else got, want, what, **kw)


def dumps(case: str) -> dict[int, str]:
    return {int(p.stem[4:]): p.read_text() for p in sorted((FIXTURES / case).glob("rank*.txt"))}


NETWORK, DIVERGENCE, STRAGGLER = dumps("hang_network"), dumps("hang_divergence"), dumps("hang_straggler")


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def ledger(n: int, tp: int, pp: int, dp: int, z: int, w: int = 2, g: int = 2, o: int = 12) -> dict[str, int]:
    """The grader's oracle: the model split over TP·PP (ceil), each term sharded over DP from its stage."""
    local = ceil_div(n, tp * pp)
    shard = ceil_div(local, dp)
    parts = {"weights": (shard if z >= 3 else local) * w, "grads": (shard if z >= 2 else local) * g,
             "optimizer": (shard if z >= 1 else local) * o}
    return {**parts, "total": sum(parts.values())}


# ---- plan_static_bytes -------------------------------------------------------------------------


@grade(plan_static_bytes, "correctness", points=3,
       hint="How many parameters does one GPU hold after TP·PP, and which term does ZeRO-1 divide by DP?")
def test_plan_static_worked_405b():
    """405B: TP8 PP8 DP16 ZeRO-1 → 30,058,593,756 B = 30.06 GB (the lecture rounds 6.33B first and prints 30.07 GB);
    TP16 PP1 DP64 ZeRO-0 → 405 GB, five H100s' worth."""
    assert_named_parts(plan_static_bytes(P405, 8, 8, 16, 1),
                       {"weights": 12_656_250_000, "grads": 12_656_250_000, "optimizer": 4_746_093_756,
                        "total": 30_058_593_756},
                       "plan_static_bytes(405e9, tp=8, pp=8, dp=16, zero_stage=1)", total="total", unit="B")
    assert_named_parts(plan_static_bytes(P405, 16, 1, 64, 0),
                       {"weights": 50_625_000_000, "grads": 50_625_000_000, "optimizer": 303_750_000_000,
                        "total": 405 * GB},
                       "plan_static_bytes(405e9, tp=16, pp=1, dp=64, zero_stage=0)", total="total", unit="B")


@grade(plan_static_bytes, "correctness", points=3,
       hint="ZeRO-2 shards the gradients too, ZeRO-3 the weights; and a slice of ceil(Ψ/(TP·PP)) loses nothing.")
@given(n=st.integers(0, 10**13), tp=st.sampled_from([1, 2, 4, 8, 16]), pp=st.integers(1, 16), dp=st.integers(1, 512),
       z=st.sampled_from([0, 1, 2, 3]), w=st.integers(0, 4), o=st.integers(0, 16))
def test_plan_static_any_plan(n, tp, pp, dp, z, w, o):
    got = plan_static_bytes(n, tp, pp, dp, z, weight_bytes=w, grad_bytes=w, optimizer_bytes=o)
    assert_named_parts(got, ledger(n, tp, pp, dp, z, w, w, o),
                       f"plan_static_bytes({n}, tp={tp}, pp={pp}, dp={dp}, zero_stage={z}, {w}, {w}, {o})",
                       total="total", unit="B")


@grade(plan_static_bytes, "correctness", points=1, validation=True,
       hint="Raise ValueError naming the argument: tp 0, ZeRO stage 4, a float parameter count.")
def test_plan_static_rejects_bad_arguments():
    assert_rejects_all(plan_static_bytes, [
        ((P405, 0, 8, 16, 1), "tp"), ((P405, 8, 0, 16, 1), "pp"), ((P405, 8, 8, 0, 1), "dp"),
        ((P405, 8, 8, 16, 4), "zero_stage"), ((P405, 8, 8, 16, True), "zero_stage"),
        ((405e9, 8, 8, 16, 1), "n_params"), ((P405, 8, 8, 16, 1, 2, 2, -12), "optimizer_bytes"),
    ])


# ---- judge_plan --------------------------------------------------------------------------------


def verdict(n, gpus, tp, pp, dp, z, act, per_node=8, memory=H100.hbm_bytes) -> dict:
    static = ledger(n, tp, pp, dp, z)["total"]
    errors = sorted((["gpu_count"] if tp * pp * dp != gpus else []) + (["oom"] if static + act > memory else []))
    return {"passed": not errors, "errors": errors, "warnings": ["tp_crosses_node"] if tp > per_node else [],
            "static_bytes": static, "peak_bytes": static + act, "headroom_bytes": memory - static - act}


def check_verdict(got, want, call: str) -> None:
    assert isinstance(got, dict) and set(want) <= set(got), (
        f"{call} returned {got!r}; expected a dict with keys {sorted(want)}")
    for key in ("passed", "errors", "warnings"):
        assert got[key] == want[key], f"{call}[{key!r}] = {got[key]!r}, expected {want[key]!r} (full expected: {want})"
    for key in ("static_bytes", "peak_bytes", "headroom_bytes"):
        assert_exact(got[key], want[key], f"{call}[{key!r}]", unit="B")


@grade(judge_plan, "correctness", points=3,
       hint="Which check makes plan A fail, and which only warns? Is 80 GB or 80 GiB the H100's memory?")
def test_judge_plan_lecture_plans():
    """Plan A (TP16 PP1 DP64 ZeRO-0): OOM at 405 GB + activations, TP across two nodes (a warning);
    plan B (TP8 PP8 DP16 ZeRO-1): passes; TP8 PP8 DP8 asks for 512 of the 1024 GPUs."""
    for tp, pp, dp, z in [(16, 1, 64, 0), (8, 8, 16, 1), (8, 8, 8, 1), (8, 16, 8, 3)]:
        call = f"judge_plan(405e9, 1024, tp={tp}, pp={pp}, dp={dp}, zero_stage={z}, activation_bytes=20 GiB)"
        check_verdict(judge_plan(P405, 1024, tp, pp, dp, z, ACT), verdict(P405, 1024, tp, pp, dp, z, ACT), call)


@grade(judge_plan, "correctness", points=2,
       hint="A peak exactly equal to the memory still fits; TP equal to the GPUs of a node stays inside it.")
@given(n=st.integers(10**9, 10**12), tp=st.sampled_from([1, 2, 4, 8, 16]), pp=st.integers(1, 8),
       dp=st.integers(1, 64), z=st.sampled_from([0, 1, 2, 3]), per_node=st.sampled_from([4, 8, 16]),
       off=st.integers(-2, 2), short=st.booleans())
def test_judge_plan_boundaries(n, tp, pp, dp, z, per_node, off, short):
    """The memory is set a few bytes around the peak; the GPU count right or one node short."""
    gpus = tp * pp * dp - (per_node if short else 0)
    static = ledger(n, tp, pp, dp, z)["total"]
    memory = max(1, static + ACT + off)
    call = f"judge_plan({n}, {gpus}, {tp}, {pp}, {dp}, {z}, {ACT}, gpus_per_node={per_node}, gpu_memory_bytes={memory})"
    check_verdict(judge_plan(n, max(gpus, 1), tp, pp, dp, z, ACT, gpus_per_node=per_node, gpu_memory_bytes=memory),
                  verdict(n, max(gpus, 1), tp, pp, dp, z, ACT, per_node, memory), call)


@grade(judge_plan, "correctness", points=1,
       hint="The default memory is the H100's from grader.constants: 80 GiB, not 80 GB.")
def test_judge_plan_default_memory_is_80_gib():
    """A peak of 82 GB fits an 80 GiB (85.9 GB) H100."""
    n = 4_750_000_000  # 76 GB static at 16 B/param on one GPU
    check_verdict(judge_plan(n, 1, 1, 1, 1, 0, 6 * GB), verdict(n, 1, 1, 1, 1, 0, 6 * GB),
                  "judge_plan(4.75e9, 1, 1, 1, 1, 0, activation_bytes=6 GB)")


@grade(judge_plan, "correctness", points=1, validation=True,
       hint="Raise ValueError naming the argument: no GPUs, negative activations, a float memory.")
def test_judge_plan_rejects_bad_arguments():
    assert_rejects_all(judge_plan, [
        ((P405, 0, 8, 8, 16, 1, ACT), "n_gpus"), ((P405, 1024, 8, 8, 16, 1, -1), "activation_bytes"),
        ((P405, 1024, 8, 8, 16, 5, ACT), "zero_stage"), ((P405, 1024, 8, 8, 16, 1, ACT, 0), "gpus_per_node"),
        ((P405, 1024, 8, 8, 16, 1, ACT, 8, 80e9), "gpu_memory_bytes"), ((P405, 1024, 0, 8, 16, 1, ACT), "tp"),
    ])


# ---- training_run ------------------------------------------------------------------------------


def run_oracle(n, tokens, total, gpus, mfu, peak=H100.bf16_flops, per_node=8, price=180.0) -> dict:
    flops = 6 * n * tokens
    step_s = flops / (gpus * peak * mfu)
    steps = ceil_div(total, tokens)
    days = steps * step_s / 86_400
    return {"flops_per_step": flops, "step_s": step_s, "steps": steps, "days": days,
            "cost": days * 24 * ceil_div(gpus, per_node) * price}


def check_run(got, want, call: str) -> None:
    assert isinstance(got, dict) and set(want) <= set(got), f"{call} returned {got!r}; expected keys {sorted(want)}"
    assert_exact(got["flops_per_step"], want["flops_per_step"], f"{call}['flops_per_step']", why="6·Ψ·tokens")
    assert_exact(got["steps"], want["steps"], f"{call}['steps']", why="ceil(total tokens / tokens per step)")
    for key in ("step_s", "days", "cost"):
        assert_number(got[key], want[key], f"{call}[{key!r}]", rel=1e-9)


@grade(training_run, "correctness", points=3,
       hint="6·Ψ FLOPs per token; how much of 1024 × 989 TFLOP/s does MFU 0.42 leave? Is a partial step a step?")
def test_training_run_405b():
    """6 · 405e9 · 8,388,608 = 2.0384e19 FLOPs; 47.92 s/step; 238,419 steps; 132.24 days; 128 nodes at 180/h."""
    got = training_run(P405, 8_388_608, 2 * 10**12, 1024, 0.42)
    check_run(got, run_oracle(P405, 8_388_608, 2 * 10**12, 1024, 0.42),
              "training_run(405e9, 8388608, 2e12, 1024, 0.42)")
    assert_exact(got["flops_per_step"], 20_384_317_440_000_000_000, "flops_per_step", why="6 · 405e9 · 8,388,608")
    assert_exact(got["steps"], 238_419, "steps", why="2e12 / 8,388,608 = 238,418.58 → 238,419 whole steps")
    assert_number(got["step_s"], 47.923732, "step_s", rel=1e-6)
    assert_number(got["cost"], 73_125_942, "cost", rel=1e-6)


@grade(training_run, "correctness", points=2,
       hint="Nodes are rented whole: how many 8-GPU nodes do 1001 GPUs need?")
@given(n=st.integers(10**8, 10**12), tokens=st.integers(1, 2**24), mult=st.integers(0, 10**6), extra=st.integers(0, 1),
       gpus=st.integers(1, 20_000), mfu=st.floats(0.05, 1.0), peak=st.sampled_from([312e12, 989e12, 2250e12]),
       per_node=st.sampled_from([4, 8, 16]), price=st.floats(0, 1000))
def test_training_run_any(n, tokens, mult, extra, gpus, mfu, peak, per_node, price):
    total = mult * tokens + extra
    got = training_run(n, tokens, total, gpus, mfu, peak_flops=peak, gpus_per_node=per_node, node_hour_price=price)
    check_run(got, run_oracle(n, tokens, total, gpus, mfu, peak, per_node, price),
              f"training_run({n}, {tokens}, {total}, {gpus}, {mfu}, peak_flops={peak}, gpus_per_node={per_node}, "
              f"node_hour_price={price})")


@grade(training_run, "correctness", points=1, validation=True,
       hint="MFU is a fraction: 42 is 4200 %. Raise ValueError naming mfu, and the other bad arguments.")
def test_training_run_rejects_bad_arguments():
    good = (P405, 8_388_608, 2 * 10**12, 1024, 0.42)
    assert_rejects_all(training_run, [
        ((P405, 8_388_608, 2 * 10**12, 1024, 42), "mfu"), ((P405, 8_388_608, 2 * 10**12, 1024, 0.0), "mfu"),
        ((P405, 0, 2 * 10**12, 1024, 0.42), "tokens_per_step"), ((P405, 8_388_608, 2e12, 1024, 0.42), "total_tokens"),
        ((P405, 8_388_608, 2 * 10**12, 0, 0.42), "n_gpus"), ((*good, 0.0), "peak_flops"),
        ((*good, 989e12, 8, -1.0), "node_hour_price"), ((*good, 989e12, 8, math.nan), "node_hour_price"),
    ])


# ---- main_thread_stack -------------------------------------------------------------------------

GRAD_FRAMES = [("all_reduce", "torch/distributed/distributed_c10d.py", 2195),
               ("wrapper", "torch/distributed/c10d_logger.py", 75), ("allreduce_grads", "train.py", 88),
               ("train_step", "train.py", 121), ("main", "train.py", 203), ("<module>", "train.py", 210)]


@grade(main_thread_stack, "correctness", points=3,
       hint="Which thread is the training loop's, and which indented lines are frames rather than --locals values?")
def test_main_thread_stack_fixtures():
    """Rank 0: MainThread is not the first thread; rank 1: a hex thread id; rank 2: dumped with --locals."""
    for rank in range(3):
        got = main_thread_stack(NETWORK[rank])
        assert as_list(got) == as_list(GRAD_FRAMES), (f"main_thread_stack(hang_network/rank{rank}.txt) = {got!r}\n"
                                    f"expected the six MainThread frames, innermost first: {GRAD_FRAMES!r}")
    got = main_thread_stack(STRAGGLER[5])
    assert len(got) == 6 and got[0][0] == "write" and as_list(got[3]) == ["save_checkpoint", "checkpoint.py", 42], (
        f"main_thread_stack(hang_straggler/rank5.txt) = {got!r}: expected write … save_checkpoint (checkpoint.py:42)")


@grade(main_thread_stack, "correctness", points=1, validation=True,
       hint="A dump without a MainThread is not a training process's dump: refuse it.")
@pytest.mark.parametrize("text", ["", NETWORK[0].replace('"MainThread"', '"Worker"'), b"Thread 1 (idle): x"])
def test_main_thread_stack_rejects(text):
    assert_rejects(main_thread_stack, (text,), "dump")


# ---- hang_call_site ----------------------------------------------------------------------------


@grade(hang_call_site, "correctness", points=3,
       hint="The wrapper around all_reduce lives in torch too: whose line is the call site?")
def test_hang_call_site():
    cases = [
        (GRAD_FRAMES, {"collective": "all_reduce", "site": "train.py:88"}),
        (main_thread_stack(NETWORK[3]), {"collective": "all_reduce", "site": "train.py:88"}),
        (main_thread_stack(DIVERGENCE[0]), {"collective": "all_reduce", "site": "train.py:151"}),
        (main_thread_stack(STRAGGLER[5]), {"collective": None, "site": "checkpoint.py:42"}),
        (GRAD_FRAMES[:2], {"collective": "all_reduce", "site": None}),
        ([("broadcast", "app/torch_utils.py", 3), ("barrier", "/x/torch/distributed/distributed_c10d.py", 9),
          ("all_reduce", "/x/torch/distributed/distributed_c10d.py", 1), ("sync", "app/run.py", 7)],
         {"collective": "barrier", "site": "app/run.py:7"}),
        ([], {"collective": None, "site": None}),
    ]
    for frames, want in cases:
        got = hang_call_site(frames)
        assert got == want, f"hang_call_site({frames!r}) = {got!r}, expected {want!r}"


# ---- triage_hang -------------------------------------------------------------------------------


@grade(triage_hang, "correctness", points=3,
       hint="Two ranks in all_reduce are not at the same collective if they called it from different lines.")
def test_triage_hang_fixtures():
    cases = [
        ("hang_network", NETWORK, "straggler_or_network", [], {"all_reduce train.py:88": [0, 1, 2, 3]}),
        ("hang_divergence", DIVERGENCE, "divergence", [0],
         {"all_reduce train.py:88": [1, 2, 3, 4, 5, 6, 7], "all_reduce train.py:151": [0]}),
        ("hang_straggler", STRAGGLER, "straggler", [5], {"all_reduce train.py:88": [0, 1, 2, 3, 4, 6, 7]}),
    ]
    for case, dumps_, verdict_, suspects, sites in cases:
        got = triage_hang(dumps_)
        want = {"verdict": verdict_, "suspects": suspects, "sites": sites}
        assert named_record(got, want) == want, f"triage_hang({case}) = {got!r}\nexpected {want!r}"


def stack(function: str, line: int) -> str:
    frames = [(function, "torch/distributed/distributed_c10d.py", 100)] if function else []
    frames += [("step", "train.py", line), ("<module>", "train.py", 1)]
    body = "".join(f"    {f} ({file}:{ln})\n" for f, file, ln in frames)
    return f'Process 1: python train.py\n\nThread 1 (active): "MainThread"\n{body}'


@grade(triage_hang, "correctness", points=2,
       hint="Who is the main group when two sites hold as many ranks each? And when no rank is in a collective?")
def test_triage_hang_rules():
    cases = [
        ({0: stack("all_reduce", 5), 1: stack("all_reduce", 6)}, "divergence", [1]),
        ({3: stack("all_reduce", 6), 1: stack("barrier", 5), 2: stack("barrier", 5), 0: stack("all_reduce", 6)},
         "divergence", [1, 2]),
        ({0: stack("", 5), 1: stack("", 9)}, "no_collective", []),
        ({0: stack("broadcast", 5), 1: stack("broadcast", 5), 2: stack("", 9), 3: stack("all_gather", 5)},
         "divergence", [2, 3]),
        ({4: stack("barrier", 5), 9: stack("", 7), 2: stack("barrier", 5)}, "straggler", [9]),
        ({7: stack("barrier", 5)}, "straggler_or_network", []),
    ]
    for dumps_, verdict_, suspects in cases:
        got = triage_hang(dumps_)
        shown = {r: hang_call_site(main_thread_stack(t)) for r, t in dumps_.items()}
        assert isinstance(got, dict) and got.get("verdict") == verdict_ and got.get("suspects") == suspects, (
            f"triage_hang of ranks at {shown} = {got!r}\nexpected verdict {verdict_!r}, suspects {suspects!r}")


@grade(triage_hang, "correctness", points=1, validation=True,
       hint="Refuse an empty dict, a rank that is not an int, a dump that is not text (ValueError naming dumps).")
@pytest.mark.parametrize("arg", [{}, [NETWORK[0]], {"0": NETWORK[0]}, {0: NETWORK[0], 1: None}, {-1: NETWORK[0]}])
def test_triage_hang_rejects(arg):
    assert_rejects(triage_hang, (arg,), "dumps")
