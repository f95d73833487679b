"""L14 · rank layout and parallel groups, `nvidia-smi topo -m`, GPU sets by their worst link, rail flows."""

from __future__ import annotations

import itertools
import math
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.kit import assert_exact, assert_parts, assert_rejects, assert_rejects_all, grade, learner

UNIT = "l14_topology"
rank_coords = learner(UNIT, "topology", "rank_coords")
parallel_groups = learner(UNIT, "topology", "parallel_groups")
groups_crossing_nodes = learner(UNIT, "topology", "groups_crossing_nodes")
parse_topo = learner(UNIT, "topology", "parse_topo")
link_rank = learner(UNIT, "topology", "link_rank")
best_gpu_set = learner(UNIT, "topology", "best_gpu_set")
alltoall_flow_classes = learner(UNIT, "topology", "alltoall_flow_classes")

FIXTURES = Path(__file__).parent / "fixtures"
H100 = (FIXTURES / "h100_topo.txt").read_text()
FRAGMENTED = (FIXTURES / "fragmented_topo.txt").read_text()
DIMS = ("tp", "cp", "pp", "dp")
COURSE = ("tp", "cp", "pp", "dp")
MEGATRON = ("tp", "cp", "dp", "pp")
TP8_PP2_DP4 = {"tp": 8, "pp": 2, "dp": 4}


def assert_named_parts(got: object, want: dict, what: str, **kw) -> None:
    """assert_parts on the keys the contract names: an extra key in the learner's dict is not a mistake."""
    assert_parts({k: got[k] for k in want if k in got} if isinstance(got, dict) else got, want, what, **kw)


# ---- oracles -----------------------------------------------------------------------------------


def coords_of(rank: int, sizes: dict[str, int], order) -> dict[str, int]:
    out = {}
    for dim in order:
        out[dim] = rank % sizes.get(dim, 1)
        rank //= sizes.get(dim, 1)
    return out


def rank_of(coords: dict[str, int], sizes: dict[str, int], order) -> int:
    rank, stride = 0, 1
    for dim in order:
        rank += coords[dim] * stride
        stride *= sizes.get(dim, 1)
    return rank


layouts = st.fixed_dictionaries({d: st.sampled_from([1, 2, 3, 4]) for d in DIMS}).flatmap(
    lambda sizes: st.tuples(st.just(sizes), st.permutations(DIMS).map(tuple)))


# ---- rank_coords -------------------------------------------------------------------------------


def named(got: object) -> object:
    """The four dims the contract names: an extra key in the learner's dict is not a mistake."""
    return {d: got.get(d) for d in DIMS} if isinstance(got, dict) else got


@grade(rank_coords, "correctness", points=2, hint="Which dim is the last digit of the mixed-radix rank?")
def test_rank_coords_worked_numbers():
    """TP8·PP2·DP4, course order (rank = dp·PP·CP·TP + pp·CP·TP + cp·TP + tp): rank 13 → tp 5, pp 1, dp 0."""
    assert named(rank_coords(13, TP8_PP2_DP4)) == {"tp": 5, "cp": 0, "pp": 1, "dp": 0}, (
        f"rank_coords(13, {TP8_PP2_DP4}) = {rank_coords(13, TP8_PP2_DP4)}, expected tp 5, cp 0, pp 1, dp 0")
    got = rank_coords(45, TP8_PP2_DP4, MEGATRON)
    assert named(got) == {"tp": 5, "cp": 0, "pp": 1, "dp": 1}, (
        f"rank_coords(45, {TP8_PP2_DP4}, order={MEGATRON}) = {got}, expected tp 5, cp 0, dp 1, pp 1 (pp outermost)")


@grade(rank_coords, "correctness", points=2,
       hint="The first dim of order varies fastest; a dim missing from sizes has size 1.")
@given(layout=layouts, data=st.data())
def test_rank_coords_bijection(layout, data):
    sizes, order = layout
    sizes = {d: s for d, s in sizes.items() if s > 1}  # missing dims have size 1
    world = math.prod(sizes.values())
    rank = data.draw(st.integers(0, world - 1))
    got = rank_coords(rank, sizes, order)
    want = coords_of(rank, sizes, order)
    assert named(got) == {d: want[d] for d in DIMS}, (
        f"rank_coords({rank}, {sizes}, order={order}) = {got}, expected {want}")
    assert rank_of(got, sizes, order) == rank


@grade(rank_coords, "correctness", points=1, validation=True,
       hint="Raise ValueError naming rank, sizes or order.")
def test_rank_coords_rejects_bad_arguments():
    assert_rejects_all(rank_coords, [
        ((64, TP8_PP2_DP4), "rank"), ((-1, TP8_PP2_DP4), "rank"), ((0, {"tp": 0}), "sizes"),
        ((0, {"ep": 2}), "sizes"), ((0, TP8_PP2_DP4, ("tp", "pp", "dp")), "order"),
        ((0, TP8_PP2_DP4, ("tp", "tp", "pp", "dp")), "order"),
    ])


# ---- parallel_groups ---------------------------------------------------------------------------


@grade(parallel_groups, "correctness", points=3,
       hint="A group of kind K: the ranks whose coordinates agree everywhere except K. How far apart are they?")
def test_parallel_groups_worked_numbers():
    cases = [
        (COURSE, "tp", 13, list(range(8, 16))), (COURSE, "dp", 0, [0, 16, 32, 48]), (COURSE, "pp", 0, [0, 8]),
        (MEGATRON, "dp", 0, [0, 8, 16, 24]), (MEGATRON, "pp", 0, [0, 32]),
    ]
    for order, kind, rank, want in cases:
        groups = parallel_groups(TP8_PP2_DP4, kind, order)
        mine = [g for g in groups if rank in g]
        assert mine == [want], (f"parallel_groups({TP8_PP2_DP4}, {kind!r}, order={order}): the {kind.upper()} "
                                f"group of rank {rank} is {mine}, expected {want}")
    assert len(parallel_groups(TP8_PP2_DP4, "dp")) == 16


@grade(parallel_groups, "correctness", points=3,
       hint="Every rank is in exactly one group of each kind, and a group has sizes[kind] members.")
@given(layout=layouts, kind=st.sampled_from(DIMS))
def test_parallel_groups_partition(layout, kind):
    sizes, order = layout
    world = math.prod(sizes.values())
    call = f"parallel_groups({sizes}, {kind!r}, order={order})"
    groups = parallel_groups(sizes, kind, order)
    want = sorted(
        sorted(rank_of({**coords_of(r, sizes, order), kind: i}, sizes, order) for i in range(sizes[kind]))
        for r in range(world) if coords_of(r, sizes, order)[kind] == 0)
    assert groups == want, f"{call} = {groups}, expected {want} (groups sorted, each sorted)"


@grade(parallel_groups, "correctness", points=1, validation=True, hint="Raise ValueError naming kind or order.")
def test_parallel_groups_rejects_bad_arguments():
    assert_rejects(parallel_groups, (TP8_PP2_DP4, "ep"), "kind")
    assert_rejects(parallel_groups, (TP8_PP2_DP4, "tp", ("tp", "cp", "pp")), "order")


# ---- groups_crossing_nodes ---------------------------------------------------------------------


@grade(groups_crossing_nodes, "correctness", points=3,
       hint="Node of rank r = r // gpus_per_node. Which kind is innermost, and does it fit in a node?")
def test_crossing_worked_numbers():
    """Course order: TP stays in its node, every PP and DP group leaves it; CP placed inside TP breaks TP."""
    for args, want in [
        ((TP8_PP2_DP4, 8), {"tp": 0, "cp": 0, "pp": 32, "dp": 16}),
        ((TP8_PP2_DP4, 8, MEGATRON), {"tp": 0, "cp": 0, "pp": 32, "dp": 16}),
        (({"tp": 8, "cp": 2, "pp": 2, "dp": 2}, 8, ("cp", "tp", "pp", "dp")), {"tp": 8, "cp": 0, "pp": 32, "dp": 32}),
        (({"tp": 4, "pp": 4}, 8), {"tp": 0, "cp": 0, "pp": 4, "dp": 0}),
    ]:
        assert_named_parts(groups_crossing_nodes(*args), want, f"groups_crossing_nodes{args}")


@grade(groups_crossing_nodes, "correctness", points=2,
       hint="Count a group once if its ranks fall on two or more nodes, whatever the number of nodes.")
@given(layout=layouts, g=st.sampled_from([1, 2, 3, 4, 8]))
def test_crossing_against_groups(layout, g):
    sizes, order = layout
    world = math.prod(sizes.values())
    want = {}
    for kind in DIMS:
        groups = {tuple(sorted(rank_of({**coords_of(r, sizes, order), kind: i}, sizes, order)
                               for i in range(sizes[kind]))) for r in range(world)}
        want[kind] = sum(len({r // g for r in grp}) > 1 for grp in groups)
    assert_named_parts(groups_crossing_nodes(sizes, g, order), want,
                       f"groups_crossing_nodes({sizes}, {g}, order={order})")
    if order[0] == "tp" and g % sizes["tp"] == 0:
        assert want["tp"] == 0


@grade(groups_crossing_nodes, "correctness", points=1, validation=True, hint="Raise ValueError naming gpus_per_node.")
def test_crossing_rejects_bad_arguments():
    assert_rejects_all(groups_crossing_nodes, [((TP8_PP2_DP4, 0), "gpus_per_node"),
                                               ((TP8_PP2_DP4, 8.0), "gpus_per_node")])


# ---- parse_topo --------------------------------------------------------------------------------


def assert_topo(got: object, want: dict, what: str) -> None:
    if not isinstance(got, dict) or not set(want) <= set(got):
        raise AssertionError(f"{what} = a {type(got).__name__} with keys {sorted(got) if isinstance(got, dict) else ''}"
                             f", expected the keys {sorted(want)}")
    for key in want:
        if got[key] != want[key]:
            diff = ([f"{k}: {got[key].get(k)!r} (expected {v!r})" for k, v in want[key].items()
                     if got[key].get(k) != v][:4] if isinstance(want[key], dict) else [repr(got[key])])
            extra = sorted(set(got[key]) - set(want[key]))[:4] if isinstance(want[key], dict) else []
            raise AssertionError(f"{what}[{key!r}] differs: {diff} extra keys {extra}")


def h100_expected() -> dict:
    def gpu_nic(g, n):
        if n < 8:
            return "PIX" if n == g else ("NODE" if (n < 4) == (g < 4) else "SYS")
        return "NODE" if (n == 8) == (g < 4) else "SYS"

    return {"gpus": list(range(8)),
            "links": {(i, j): "NV18" for i in range(8) for j in range(8) if i != j},
            "nic_links": {(g, f"NIC{n}"): gpu_nic(g, n) for g in range(8) for n in range(10)},
            "cpu_affinity": {g: "0-47,96-143" if g < 4 else "48-95,144-191" for g in range(8)},
            "numa": {g: int(g >= 4) for g in range(8)}}


FRAG_PCIE = {(4, 5): "PIX", (6, 7): "PIX", (4, 6): "PXB", (5, 6): "PXB", (4, 7): "PHB", (5, 7): "PHB"}


def frag_code(i: int, j: int) -> str:
    if i < 4 and j < 4:
        return "NV4"
    if i >= 4 and j >= 4:
        return FRAG_PCIE[(min(i, j), max(i, j))]
    return "SYS"


def frag_expected() -> dict:
    return {"gpus": list(range(8)),
            "links": {(i, j): frag_code(i, j) for i in range(8) for j in range(8) if i != j}, "nic_links": {},
            "cpu_affinity": {g: "0-15,32-47" if g < 4 else "16-31,48-63" for g in range(8)},
            "numa": {g: int(g >= 4) for g in range(8)}}


@grade(parse_topo, "correctness", points=3,
       hint="The header names the columns; 'CPU Affinity' is one column with a space in its name.")
def test_parse_topo_fixtures():
    """A DGX-H100-like node (8 GPUs NV18, 10 NICs, GPU NUMA ID column) and a fragmented PCIe box (no NICs)."""
    got = parse_topo(H100)
    assert_topo(got, h100_expected(), "parse_topo(h100_topo.txt)")
    assert_exact(sum(code == "NV18" for code in got["links"].values()), 56, "NV18 GPU pairs in h100_topo.txt")
    assert_topo(parse_topo(FRAGMENTED), frag_expected(), "parse_topo(fragmented_topo.txt)")


def mangle(text: str, seed: int, drop_numa_id: bool, shuffle: bool) -> str:
    """Tabs to runs of spaces, GPU rows permuted, a warning line first, the GPU NUMA ID column dropped."""
    lines = text.splitlines()
    header, end = 0, next(i for i, line in enumerate(lines) if not line.strip())
    table = lines[header + 1:end]
    if drop_numa_id:
        lines[header] = lines[header].replace("\tGPU NUMA ID", "")
        table = [re.sub(r"\t\tN/A$", "", row) for row in table]
    if shuffle:
        table = table[seed % len(table):] + table[:seed % len(table)]
    spaced = [row.replace("\t", " " * (1 + (seed + i) % 4)) for i, row in enumerate([lines[header], *table])]
    return "\n".join(["WARNING: infoROM is corrupted at gpu 0000:19:00.0", *spaced, *lines[end:]])


@grade(parse_topo, "correctness", points=2,
       hint="Split cells on any whitespace, key rows by their name, and let optional columns be missing.")
@settings(max_examples=12)
@given(seed=st.integers(0, 50), drop=st.booleans(), shuffle=st.booleans(), which=st.booleans())
def test_parse_topo_mangled_variants(seed, drop, shuffle, which):
    text, want = (H100, h100_expected()) if which else (FRAGMENTED, frag_expected())
    assert_topo(parse_topo(mangle(text, seed, drop, shuffle)), want,
                f"parse_topo(a variant of {'h100' if which else 'fragmented'}_topo.txt: spaces for tabs, "
                f"a warning line first, rows shuffled={shuffle}, GPU NUMA ID dropped={drop})")


@grade(parse_topo, "correctness", points=2, validation=True,
       hint="Refuse, naming text, what is not a topology matrix: no header, short rows, unknown codes.")
def test_parse_topo_refuses_malformed():
    rows = FRAGMENTED.splitlines()
    truncated = "\n".join([*rows[:3], rows[3].rsplit("\t", 6)[0], *rows[4:]])
    unknown = FRAGMENTED.replace("GPU4\tSYS", "GPU4\tNVX", 1)
    asymmetric = FRAGMENTED.replace("GPU5\tSYS\tSYS\tSYS\tSYS\tPIX", "GPU5\tSYS\tSYS\tSYS\tSYS\tPXB", 1)
    for bad, why in [("", "empty"), ("Legend:\n  X = Self\n", "no header"), (truncated, "a short row"),
                     (unknown, "an unknown code"), (asymmetric, "GPU4→GPU5 PIX but GPU5→GPU4 PXB"), (None, "None")]:
        try:
            assert_rejects(parse_topo, (bad,), "text")
        except AssertionError as exc:
            raise AssertionError(f"{why}: {exc}") from None


# ---- link_rank and best_gpu_set ----------------------------------------------------------------


@grade(link_rank, "correctness", points=2, hint="Is NODE closer than PHB? Read the legend of nvidia-smi topo -m.")
def test_link_rank_order():
    want = {"NV18": 118, "NV4": 104, "NV1": 101, "PIX": 5, "PXB": 4, "PHB": 3, "NODE": 2, "SYS": 1}
    for code, rank in want.items():
        assert_exact(link_rank(code), rank, f"link_rank({code!r})",
                     why="NV# → 100 + #, then PIX > PXB > PHB > NODE > SYS")


@grade(link_rank, "correctness", points=1, validation=True, hint="Raise ValueError naming code for anything else.")
def test_link_rank_rejects_unknown_codes():
    assert_rejects_all(link_rank, [(("X",), "code"), (("NV",), "code"), (("nv8",), "code"), (("QPI",), "code"),
                                   ((18,), "code")])


@grade(best_gpu_set, "correctness", points=3,
       hint="A collective runs at the speed of its worst link: compare sets by their minimum first.")
def test_best_gpu_set_fragmented():
    topo = frag_expected()
    for args, want in [((4,), (0, 1, 2, 3)), ((4, list(range(1, 8))), (4, 5, 6, 7)), ((3, [4, 5, 6, 7]), (4, 5, 6)),
                       ((8,), tuple(range(8))), ((2, [7, 3, 5]), (5, 7)), ((1, [6, 2]), (2,))]:
        got = best_gpu_set(topo, *args)
        assert got == want, f"best_gpu_set(fragmented, {', '.join(map(repr, args))}) = {got!r}, expected {want}"
    # a PCIe box without NVLink on GPUs 0-3 (0-1 under one host bridge, 2-3 between two), NV2 and NV12 on 4-7
    codes = {(0, 1): "PHB", (2, 3): "NODE", (4, 5): "NV2", (6, 7): "NV12", (4, 6): "NV2", (5, 7): "NV2"}
    links = {(i, j): codes.get((min(i, j), max(i, j)), "SYS") for i in range(8) for j in range(8) if i != j}
    box = {"gpus": list(range(8)), "links": links, "nic_links": {}, "cpu_affinity": {}, "numa": {}}
    for args, want in [((2, [0, 1, 2, 3]), (0, 1)), ((2, [4, 5, 6, 7]), (6, 7))]:
        got = best_gpu_set(box, *args)
        assert got == want, (f"best_gpu_set(box {codes}, {', '.join(map(repr, args))}) = {got!r}, expected {want}: "
                             "PHB beats NODE, and more NVLinks beat fewer")


def brute_force(links: dict, k: int, gpus: list[int]) -> tuple[int, ...]:
    def score(s):
        ranks = [links[p] for p in itertools.combinations(s, 2)]
        return (-min(ranks, default=0), -sum(ranks), s)
    return min(itertools.combinations(sorted(gpus), k), key=score)


CODES = ["NV18", "NV12", "NV4", "NV2", "PIX", "PXB", "PHB", "NODE", "SYS"]
RANKS = {"NV18": 118, "NV12": 112, "NV4": 104, "NV2": 102, "PIX": 5, "PXB": 4, "PHB": 3, "NODE": 2, "SYS": 1}


@grade(best_gpu_set, "correctness", points=3,
       hint="Among sets with the same worst link, the larger sum wins; then the smallest tuple.")
@settings(max_examples=30)
@given(n=st.integers(2, 7), data=st.data())
def test_best_gpu_set_brute_force(n, data):
    codes = {p: data.draw(st.sampled_from(CODES)) for p in itertools.combinations(range(n), 2)}
    links = {**codes, **{(j, i): c for (i, j), c in codes.items()}}
    available = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n, unique=True))
    k = data.draw(st.integers(1, len(available)))
    topo = {"gpus": list(range(n)), "links": links, "nic_links": {}, "cpu_affinity": {}, "numa": {}}
    want = brute_force({p: RANKS[c] for p, c in links.items()}, k, available)
    got = best_gpu_set(topo, k, available)
    assert got == want, f"best_gpu_set(k={k}, available={available}) on links {codes} = {got!r}, expected {want}"


@grade(best_gpu_set, "correctness", points=1, validation=True, hint="Raise ValueError naming k or available.")
def test_best_gpu_set_rejects_bad_arguments():
    topo = frag_expected()
    assert_rejects_all(best_gpu_set, [((topo, 9), "k"), ((topo, 0), "k"), ((topo, 3, [4, 5]), "k"),
                                      ((topo, 2.0), "k"), ((topo, 2, [1, 9]), "available")])


# ---- alltoall_flow_classes ---------------------------------------------------------------------


@grade(alltoall_flow_classes, "correctness", points=2,
       hint="A flow between nodes stays on its rail only when source and destination have the same GPU index.")
def test_alltoall_worked_numbers():
    """2 nodes × 8: of 64 pairs per direction 8 stay on their rail and 56 cross it; 16 nodes: 13,440 of 16,256."""
    assert_named_parts(alltoall_flow_classes(2, 8),
                       {"intra_node": 112, "same_rail": 16, "cross_rail": 112, "total": 240},
                       "alltoall_flow_classes(2, 8)", total="total")
    assert_exact(alltoall_flow_classes(16, 8)["cross_rail"], 13_440, "alltoall_flow_classes(16, 8)['cross_rail']")


@grade(alltoall_flow_classes, "correctness", points=2, hint="Enumerate (src, dst) pairs by hand for 2 nodes of 2.")
@given(n=st.integers(1, 12), g=st.integers(1, 9))
def test_alltoall_enumerated(n, g):
    want = {"intra_node": 0, "same_rail": 0, "cross_rail": 0}
    for src, dst in itertools.permutations(range(n * g), 2):
        key = "intra_node" if src // g == dst // g else ("same_rail" if src % g == dst % g else "cross_rail")
        want[key] += 1
    want["total"] = n * g * (n * g - 1)
    assert_named_parts(alltoall_flow_classes(n, g), want, f"alltoall_flow_classes({n}, {g})", total="total")


@grade(alltoall_flow_classes, "correctness", points=1, validation=True, hint="Raise ValueError naming the argument.")
@pytest.mark.parametrize("args, name", [((0, 8), "n_nodes"), ((2, 0), "gpus_per_node"), ((2.0, 8), "n_nodes")])
def test_alltoall_rejects_bad_arguments(args, name):
    assert_rejects(alltoall_flow_classes, args, name)
