"""L01 · list vs tensor bytes (CPython's own counts), smart-pointer ownership (a reference model), zero copy."""

from __future__ import annotations

import random
import sys

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.kit import assert_exact, assert_rejects, assert_rejects_all, grade, learner

UNIT = "l01_cpp_python"
list_vs_tensor_bytes = learner(UNIT, "boundary", "list_vs_tensor_bytes")
simulate_ownership = learner(UNIT, "boundary", "simulate_ownership")
zero_copy_report = learner(UNIT, "boundary", "zero_copy_report")

LEDGER_KEYS = ("list_header", "pointer_slots", "float_objects", "list_total", "tensor_bytes")


def check_ledger(got: dict, want: dict, what: str) -> None:
    assert isinstance(got, dict), f"{what} returned {type(got).__name__}, expected a dict with keys {LEDGER_KEYS}"
    for key in LEDGER_KEYS:
        assert key in got, f"{what} has no key {key!r} (keys: {sorted(got)})"
        assert_exact(got[key], want[key], f"{what}[{key!r}]", unit="B")


# ---- list_vs_tensor_bytes --------------------------------------------------------------------------------------


@grade(list_vs_tensor_bytes, "correctness", points=2,
       hint="What does each element of a list of floats cost besides its 8-byte pointer slot?")
def test_list_vs_tensor_worked():
    """One million floats: 32,000,056 B as a list (8x the fp32 tensor); a comprehension's over-allocated list."""
    check_ledger(list_vs_tensor_bytes(1_000_000), {"list_header": 56, "pointer_slots": 8_000_000,
                 "float_objects": 24_000_000, "list_total": 32_000_056, "tensor_bytes": 4_000_000},
                 "list_vs_tensor_bytes(1_000_000)")
    check_ledger(list_vs_tensor_bytes(1_000_000, capacity=1_056_084), {"list_header": 56, "pointer_slots": 8_448_672,
                 "float_objects": 24_000_000, "list_total": 32_448_728, "tensor_bytes": 4_000_000},
                 "list_vs_tensor_bytes(1_000_000, capacity=1_056_084)")
    check_ledger(list_vs_tensor_bytes(3, 2), {"list_header": 56, "pointer_slots": 24, "float_objects": 72,
                 "list_total": 152, "tensor_bytes": 6}, "list_vs_tensor_bytes(3, 2)")


@grade(list_vs_tensor_bytes, "correctness", points=2,
       hint="Is sys.getsizeof of the list the whole cost? What does it leave out?")
@settings(max_examples=40)
@given(n=st.integers(0, 100_000), elem_bytes=st.sampled_from([1, 2, 4, 8]), extra=st.integers(0, 5000))
def test_list_vs_tensor_matches_cpython(n, elem_bytes, extra):
    """list_total = sys.getsizeof(t.tolist()) + 24 n for n distinct floats; capacity adds 8 B per spare slot."""
    exact = sys.getsizeof(torch.arange(n, dtype=torch.float64).tolist())  # an exactly sized list of n floats
    got = list_vs_tensor_bytes(n, elem_bytes)
    what = f"list_vs_tensor_bytes({n}, {elem_bytes})"
    assert_exact(got["list_total"], exact + 24 * n, f"{what}['list_total']", why="getsizeof + 24 B per float",
                 unit="B")
    assert_exact(got["tensor_bytes"], n * elem_bytes, f"{what}['tensor_bytes']", unit="B")
    roomy = list_vs_tensor_bytes(n, elem_bytes, capacity=n + extra)
    assert_exact(roomy["list_total"], exact + 24 * n + 8 * extra,
                 f"list_vs_tensor_bytes({n}, {elem_bytes}, capacity={n + extra})['list_total']",
                 why="8 B per slot of capacity", unit="B")


@grade(list_vs_tensor_bytes, "correctness", points=1, validation=True, hint="Raise ValueError naming the argument.")
def test_list_vs_tensor_rejects():
    assert_rejects_all(list_vs_tensor_bytes, [((-1,), "n"), ((4.0,), "n"), ((True,), "n"), ((4, 0), "elem_bytes"),
                                              ((4, 2.0), "elem_bytes"), ((4, 4, 3), "capacity"),
                                              ((4, 4, -1), "capacity"), ((4, 4, 5.0), "capacity")])


# ---- simulate_ownership ----------------------------------------------------------------------------------------


class RefOwnership:
    """The reference: each variable holds None or [kind, res]; a resource's owners are counted by scanning the
    variables (no counters kept), and it is freed when the handle just dropped was its last owner."""

    def __init__(self) -> None:
        self.vars: dict[str, list | None] = {}  # insertion order = first assignment
        self.alive: list[str] = []
        self.freed: list[str] = []

    def owners(self, res: str) -> int:
        return sum(1 for h in self.vars.values() if h is not None and h[0] != "weak" and h[1] == res)

    def put(self, var: str, handle: list | None) -> None:
        old = self.vars.get(var)
        self.vars[var] = handle
        if old is not None and old[0] != "weak" and old[1] in self.alive and self.owners(old[1]) == 0:
            self.alive.remove(old[1])
            self.freed.append(old[1])

    def valid(self, op: tuple) -> bool:
        """Whether the contract makes ``op`` legal (and unambiguous) in the current state."""
        kind, *names = op
        if kind in ("unique", "shared"):
            return True
        src = names[-1]
        if src not in self.vars:
            return False
        h = self.vars[src]
        return {"copy": h is None or h[0] != "unique", "move": True, "reset": True,
                "weak": h is None or h[0] == "shared", "lock": h is not None and h[0] == "weak"}[kind]

    def step(self, op: tuple) -> None:
        kind, *names = op
        if kind in ("unique", "shared"):
            self.put(names[0], None)
            self.alive.append(names[1])
            self.vars[names[0]] = [kind, names[1]]
        elif kind == "copy":
            h = self.vars[names[1]]
            self.put(names[0], None if h is None else list(h))
        elif kind == "move" and names[0] != names[1]:
            h = self.vars[names[1]]
            self.vars[names[1]] = None
            self.put(names[0], h)
        elif kind == "weak":
            h = self.vars[names[1]]
            self.put(names[0], None if h is None else ["weak", h[1]])
        elif kind == "lock":
            res = self.vars[names[1]][1]
            self.put(names[0], ["shared", res] if res in self.alive else None)
        elif kind == "reset":
            self.put(names[0], None)
        elif kind == "end":
            for var in reversed(list(self.vars)):
                self.put(var, None)
                del self.vars[var]

    def result(self) -> dict:
        return {"freed": self.freed, "live": {r: self.owners(r) for r in sorted(self.alive)}}


def random_ops(seed: int, length: int) -> tuple[list[tuple], dict]:
    """A valid sequence (no op the contract makes an error) ending in a scope exit, and the reference's result."""
    rng, ref, ops, fresh = random.Random(seed), RefOwnership(), [], 0
    for _ in range(length):
        kind = rng.choice(["unique", "shared", "shared", "copy", "move", "weak", "weak", "lock", "lock", "reset"])
        var, src = rng.choice("abcd"), rng.choice("abcd")
        op = (kind, var, f"R{fresh}") if kind in ("unique", "shared") else ("reset", src) if kind == "reset" \
            else (kind, var, src)
        if not ref.valid(op):
            op = ("shared", var, f"R{fresh}")
        fresh += op[0] in ("unique", "shared")
        ref.step(op)
        ops.append(op)
    ref.step(("end",))
    return [*ops, ("end",)], ref.result()


def check_ownership(ops: list[tuple], want: dict) -> None:
    got = simulate_ownership(ops)
    what = f"simulate_ownership({ops})"
    assert isinstance(got, dict) and "freed" in got and "live" in got, f"{what} = {got!r}: expected keys freed, live"
    assert list(got["freed"]) == want["freed"], f"{what}['freed'] = {got['freed']}, expected {want['freed']}"
    assert dict(got["live"]) == want["live"], f"{what}['live'] = {got['live']}, expected {want['live']}"
    assert list(got["live"]) == sorted(got["live"]), f"{what}['live'] keys {list(got['live'])}: sort them by name"


WORKED = [
    ([("unique", "a", "buf"), ("move", "b", "a"), ("end",)], {"freed": ["buf"], "live": {}}),
    ([("shared", "p1", "X"), ("copy", "p2", "p1"), ("weak", "w", "p1"), ("reset", "p1"), ("lock", "q", "w"),
      ("reset", "p2")], {"freed": [], "live": {"X": 1}}),
    ([("shared", "p1", "X"), ("weak", "w", "p1"), ("reset", "p1"), ("lock", "q", "w"), ("end",)],
     {"freed": ["X"], "live": {}}),
    ([("unique", "a", "A"), ("unique", "a", "B")], {"freed": ["A"], "live": {"B": 1}}),
    ([("shared", "s", "S"), ("copy", "t", "s"), ("unique", "u", "U"), ("end",)], {"freed": ["U", "S"], "live": {}}),
    ([("unique", "a", "A"), ("move", "a", "a"), ("shared", "b", "B"), ("copy", "b", "b")],
     {"freed": [], "live": {"A": 1, "B": 1}}),
    # after a move the source owns nothing: resetting the destination frees the resource there and then
    ([("unique", "a", "A"), ("move", "b", "a"), ("reset", "b"), ("unique", "c", "C"), ("end",)],
     {"freed": ["A", "C"], "live": {}}),
]


@grade(simulate_ownership, "correctness", points=2,
       hint="After a move, how many handles own the resource? Which variable is released first at scope exit?")
def test_ownership_worked():
    """The lecture's cases: unique_ptr moved, shared_ptr copied, weak_ptr locked in time and too late."""
    for ops, want in WORKED:
        check_ownership(ops, want)


@grade(simulate_ownership, "correctness", points=3,
       hint="Does a weak handle count as an owner? Is every resource freed exactly once by the scope exit?")
@settings(max_examples=60)
@given(seed=st.integers(0, 10**6), length=st.integers(1, 14))
def test_ownership_matches_reference(seed, length):
    """Random valid sequences against the reference: use_count = owning handles, each resource freed once at end."""
    ops, want = random_ops(seed, length)
    check_ownership(ops, want)
    assert sorted(want["freed"]) == sorted({op[2] for op in ops if op[0] in ("unique", "shared")})


@grade(simulate_ownership, "correctness", points=1, validation=True, hint="Raise ValueError naming ops[i].")
def test_ownership_rejects():
    assert_rejects(simulate_ownership, ([("unique", "a", "A"), ("copy", "b", "a")],), "ops[1]")
    assert_rejects_all(simulate_ownership, [
        (([("shared", "p", "X"), ("copy", "q", "nobody")],), "ops[1]"),
        (([("unique", "a", "A"), ("weak", "w", "a")],), "ops[1]"),
        (([("shared", "a", "A"), ("lock", "b", "a")],), "ops[1]"),
        (([("shared", "a", "A"), ("shared", "b", "A")],), "ops[1]"),
        (([("reset", "a")],), "ops[0]"),
        (([("shared", "a")],), "ops[0]"),
        (([("share", "a", "A")],), "ops[0]"),
        (([("shared", "a", "A"), "end"],), "ops[1]"),
        (("end",), "ops"),
    ])


# ---- zero_copy_report ------------------------------------------------------------------------------------------

KEYS = ("numpy", "from_numpy", "view", "slice", "transpose", "transpose_contiguous", "contiguous_of_contiguous",
        "clone", "to_same_dtype", "to_other_dtype", "tensor_of_numpy")


def truth(x: torch.Tensor) -> dict[str, bool]:
    """Ground truth, by the addresses each result's elements live at (NumPy: np.shares_memory with x's own array)."""
    own = np.frombuffer(memoryview(x.numpy()).cast("B"), dtype=np.uint8)

    def shares(t) -> bool:
        arr = t if isinstance(t, np.ndarray) else t.numpy()
        return bool(np.shares_memory(own, arr))

    other = torch.float32 if x.dtype == torch.float64 else torch.float64
    return {"numpy": shares(x.numpy()), "from_numpy": shares(torch.from_numpy(x.numpy())), "view": shares(x.view(-1)),
            "slice": shares(x[1:]), "transpose": shares(x.transpose(0, 1)),
            "transpose_contiguous": shares(x.transpose(0, 1).contiguous()), "contiguous_of_contiguous":
            shares(x.contiguous()), "clone": shares(x.clone()), "to_same_dtype": shares(x.to(x.dtype)),
            "to_other_dtype": shares(x.to(other)), "tensor_of_numpy": shares(torch.tensor(x.numpy()))}


def check_report(x: torch.Tensor, want: dict[str, bool], what: str) -> None:
    got = zero_copy_report(x)
    assert isinstance(got, dict), f"{what} returned {type(got).__name__}, expected a dict of bools"
    for key in KEYS:
        assert key in got, f"{what} has no key {key!r}"
        assert got[key] is want[key] or (isinstance(got[key], bool | np.bool_) and bool(got[key]) == want[key]), (
            f"{what}[{key!r}] = {got[key]!r}, expected {want[key]}: compare untyped_storage().data_ptr(), "
            "not data_ptr() (a slice starts inside the same storage)")


@grade(zero_copy_report, "correctness", points=2,
       hint="x[1:].data_ptr() differs from x.data_ptr(): does that make it a copy?")
def test_zero_copy_worked():
    """torch.arange(12.).view(3, 4): views, slices, transposes and numpy share; clone, casts and torch.tensor copy."""
    want = dict.fromkeys(KEYS, True) | {"transpose_contiguous": False, "clone": False, "to_other_dtype": False,
                                        "tensor_of_numpy": False}
    check_report(torch.arange(12.0).view(3, 4), want, "zero_copy_report(torch.arange(12.).view(3, 4))")


@grade(zero_copy_report, "correctness", points=2,
       hint="Does .to(x.dtype) or .contiguous() of a contiguous tensor make anything new?")
def test_zero_copy_matches_truth():
    """fp32, fp64 and int64; 2-D and 3-D; one column (its transpose is already contiguous)."""
    for dtype in (torch.float32, torch.float64, torch.int64):
        for shape in ((2, 3), (5, 1), (4, 3, 2), (2, 2, 5)):
            x = torch.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)
            check_report(x, truth(x), f"zero_copy_report(a {shape} {dtype} tensor)")


@grade(zero_copy_report, "correctness", points=1, validation=True, hint="Raise ValueError naming x.")
def test_zero_copy_rejects():
    assert_rejects_all(zero_copy_report, [
        ((torch.arange(12.0).view(3, 4).t(),), "x"),
        ((torch.arange(4.0),), "x"),
        ((torch.arange(4.0).view(1, 4),), "x"),
        ((np.ones((3, 2)),), "x"),
    ])
