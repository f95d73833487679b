"""L03 · cache address fields, an LRU set-associative cache, struct padding (vs ctypes), numactl and GPU affinity."""

from __future__ import annotations

import ctypes
import random
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from grader.kit import assert_exact, assert_rejects, assert_rejects_all, grade, learner

UNIT = "l03_cpu_memory"
cache_decompose = learner(UNIT, "cpu_memory", "cache_decompose")
simulate_cache = learner(UNIT, "cpu_memory", "simulate_cache")
matrix_addresses = learner(UNIT, "cpu_memory", "matrix_addresses")
struct_layout = learner(UNIT, "cpu_memory", "struct_layout")
best_field_order = learner(UNIT, "cpu_memory", "best_field_order")
parse_numactl = learner(UNIT, "cpu_memory", "parse_numactl")
gpu_cpu_affinity = learner(UNIT, "cpu_memory", "gpu_cpu_affinity")

FIXTURES = Path(__file__).parent / "fixtures"
TWO_NODE = (FIXTURES / "numactl_2node.txt").read_text()
FOUR_NODE = (FIXTURES / "numactl_4node_memonly.txt").read_text()
ONE_NODE = (FIXTURES / "numactl_1node.txt").read_text()
NODE0 = list(range(16)) + list(range(32, 48))
NODE1 = list(range(16, 32)) + list(range(48, 64))


def check(got: object, want: object, call: str, why: str) -> None:
    assert type(got) is type(want) and got == want, f"{call} = {got!r}, expected {want!r}: {why}"


# ---- cache_decompose ----------------------------------------------------------------------------


@grade(cache_decompose, "correctness", points=2,
       hint="Which bits of 0x12345 pick the byte in the line, and which the set?")
def test_cache_decompose_worked_examples():
    check(cache_decompose(0x12345), (18, 13, 5), "cache_decompose(0x12345)",
          "offset = low 6 bits (5), set = next 6 bits (13), tag = the rest (18)")
    check(cache_decompose(0x12345, n_sets=1024), (1, 141, 5), "cache_decompose(0x12345, n_sets=1024)",
          "10 set bits: set 141, tag 1")
    check(cache_decompose(4096 * 3 + 64 * 7 + 63, 64, 64), (3, 7, 63), "cache_decompose(12735)",
          "tag 3, set 7, byte 63")
    check(cache_decompose(0, 32, 1), (0, 0, 0), "cache_decompose(0, 32, 1)", "one set: the set is always 0")


@grade(cache_decompose, "correctness", points=2, hint="tag, set and offset must put the address back together.")
@settings(max_examples=150)
@given(addr=st.integers(0, 2**48), line_log=st.integers(0, 8), sets_log=st.integers(0, 14))
def test_cache_decompose_recomposes(addr, line_log, sets_log):
    line, sets = 2**line_log, 2**sets_log
    got = cache_decompose(addr, line, sets)
    assert isinstance(got, list | tuple) and len(got) == 3, (
        f"cache_decompose({addr}, {line}, {sets}) = {got!r}: a 3-tuple")
    tag, index, offset = got
    call = f"cache_decompose({addr}, {line}, {sets}) = {got}"
    assert 0 <= offset < line and 0 <= index < sets, f"{call}: offset must be < {line} and set < {sets}"
    assert_exact((tag * sets + index) * line + offset, addr, f"(tag·sets + set)·line + offset for {call}",
                 why="the three fields are the address's bits, high to low")


@grade(cache_decompose, "correctness", points=1, validation=True, hint="What is a cache of 48 sets indexed by?")
def test_cache_decompose_rejects():
    assert_rejects_all(cache_decompose, [
        ((-1,), "addr"), ((1.5,), "addr"), ((True,), "addr"),
        ((64, 48), "line_bytes"), ((64, 0), "line_bytes"), ((64, 64, 48), "n_sets"), ((64, 64, 0), "n_sets"),
    ])


# ---- simulate_cache -----------------------------------------------------------------------------


def reference_cache(addresses, line: int, sets: int, ways: int) -> dict[str, int]:
    """The oracle: per set, a list of (last use time, tag); evict the smallest time."""
    table = [dict() for _ in range(sets)]
    out = {"accesses": 0, "hits": 0, "misses": 0, "evictions": 0}
    for t, a in enumerate(addresses):
        block = a // line
        s, tag = block % sets, block // sets
        out["accesses"] += 1
        if tag in table[s]:
            out["hits"] += 1
        else:
            out["misses"] += 1
            if len(table[s]) >= ways:
                victim = min(table[s], key=table[s].get)
                del table[s][victim]
                out["evictions"] += 1
        table[s][tag] = t
    return out


@grade(simulate_cache, "correctness", points=3,
       hint="Walking a column, which sets do the lines 256 B apart fall in, and how many ways does each have?")
def test_simulate_cache_matrix_walks():
    """64×64 fp32 through a 4 KiB 4-way cache: rows, columns, a bigger cache, and padded rows."""
    small = dict(line_bytes=64, n_sets=16, ways=4)
    cases = [
        ("row", None, small, {"accesses": 4096, "hits": 3840, "misses": 256, "evictions": 192},
         "one miss per 64-B line (16 floats), then 15 hits"),
        ("col", None, small, {"accesses": 4096, "hits": 0, "misses": 4096, "evictions": 4032},
         "lines 256 B apart use only sets 0, 4, 8, 12: 64 lines fight for 16 slots"),
        ("col", None, dict(line_bytes=64, n_sets=64, ways=8), {"accesses": 4096, "hits": 3840, "misses": 256,
                                                                  "evictions": 0},
         "32 KiB, 8-way: the 16 KiB matrix fits, one miss per line"),
        ("col", 65, small, {"accesses": 4096, "hits": 3005, "misses": 1091, "evictions": 1027},
         "rows of 65 floats spread the column over every set"),
    ]
    for order, pitch, cache, want, why in cases:
        addrs = matrix_addresses(64, 64, 4, order, pitch)
        check(simulate_cache(addrs, **cache), want, f"simulate_cache(matrix_addresses(64, 64, 4, {order!r}, {pitch}),"
              f" {cache})", why)


@grade(simulate_cache, "correctness", points=3, hint="On a hit, does the line become the most recently used?")
@settings(max_examples=60)
@given(seed=st.integers(0, 2**32 - 1), sets_log=st.integers(0, 3), ways=st.integers(1, 4),
       n=st.integers(0, 2000), span=st.sampled_from([512, 2048, 8192]))
def test_simulate_cache_matches_reference(seed, sets_log, ways, n, span):
    """Random streams with reuse (≤ 2000 accesses): the same counts as a timestamp LRU written here."""
    rng = random.Random(seed)
    addrs = []
    for _ in range(n):  # mostly reuse of recent addresses, sometimes a fresh one: LRU order matters
        reuse = addrs and rng.random() < 0.5
        addrs.append(rng.choice(addrs[-8:]) + rng.randrange(16) if reuse else rng.randrange(span))
    sets = 2**sets_log
    want = reference_cache(addrs, 32, sets, ways)
    got = simulate_cache(iter(addrs), 32, sets, ways)
    check(got, want, f"simulate_cache(<{n} addresses, seed {seed}>, 32, {sets}, {ways})",
          "a true-LRU reference gives these counts (the addresses come as an iterator: read them once)")


@grade(simulate_cache, "correctness", points=2, hint="With more ways per set, can LRU ever miss more?")
@settings(max_examples=40)
@given(seed=st.integers(0, 2**32 - 1), sets_log=st.integers(0, 2), ways=st.integers(1, 6))
def test_simulate_cache_lru_inclusion(seed, sets_log, ways):
    """LRU is a stack algorithm: ways + 1 never misses more than ways; hits + misses == accesses.

    Belady's sequence (lines 1 2 3 4 1 2 5 1 2 3 4 5, one set) is where FIFO misses more with 4 ways than with 3.
    """
    belady = [64 * k for k in (1, 2, 3, 4, 1, 2, 5, 1, 2, 3, 4, 5)]
    three, four = simulate_cache(belady, 64, 1, 3)["misses"], simulate_cache(belady, 64, 1, 4)["misses"]
    assert (three, four) == (10, 8), (f"simulate_cache(<lines 1 2 3 4 1 2 5 1 2 3 4 5>, 64, 1, ways) misses {three}"
                                      f" with 3 ways and {four} with 4, expected 10 and 8: evict the least recently"
                                      " used line (FIFO gives 9 and 10, Belady's anomaly)")
    rng = random.Random(seed)
    addrs = [rng.randrange(4096) for _ in range(600)]
    a = simulate_cache(addrs, 64, 2**sets_log, ways)
    b = simulate_cache(addrs, 64, 2**sets_log, ways + 1)
    for got in (a, b):
        assert_exact(got["hits"] + got["misses"], got["accesses"], "hits + misses", why="every access is one of them")
        assert_exact(got["accesses"], 600, "accesses", why="600 addresses")
    assert b["misses"] <= a["misses"], (f"simulate_cache(..., ways={ways + 1}) misses {b['misses']} > "
                                        f"{a['misses']} with ways={ways}: true LRU never misses more with more ways")


@grade(simulate_cache, "correctness", points=1, validation=True, hint="Is a 24-set cache indexed by address bits?")
def test_simulate_cache_rejects():
    assert_rejects_all(simulate_cache, [
        (([0, 64], 48), "line_bytes"), (([0], 64, 24), "n_sets"), (([0], 64, 64, 0), "ways"),
        (([0, -64],), "addresses"), (([0, 6.4],), "addresses"),
    ])


# ---- struct_layout / best_field_order -----------------------------------------------------------

CTYPES = {
    "char": ctypes.c_char, "bool": ctypes.c_bool, "int8": ctypes.c_int8, "uint8": ctypes.c_uint8,
    "short": ctypes.c_short, "half": ctypes.c_uint16, "int16": ctypes.c_int16,
    "int": ctypes.c_int, "float": ctypes.c_float, "int32": ctypes.c_int32,
    "long": ctypes.c_long, "double": ctypes.c_double, "pointer": ctypes.c_void_p, "int64": ctypes.c_int64,
}


def ctypes_layout(fields) -> tuple[dict[str, int], int]:
    """The C compiler's answer: a ctypes.Structure with the same fields."""
    cls = ctypes_layout_cls(fields)
    return {name: getattr(cls, name).offset for name, _ in fields}, ctypes.sizeof(cls)


field_lists = st.lists(
    st.tuples(st.sampled_from(sorted(CTYPES)), st.integers(0, 3)), min_size=1, max_size=8
).map(lambda fs: [(f"f{i}", t if n == 0 else f"{t}[{n}]") for i, (t, n) in enumerate(fs)])


@grade(struct_layout, "correctness", points=2,
       hint="Where may a double start, and how big must the struct be for an array?")
def test_struct_layout_worked_examples():
    check(struct_layout([("a", "char"), ("b", "double"), ("c", "char")]),
          {"offsets": {"a": 0, "b": 8, "c": 16}, "size": 24, "align": 8, "padding": 14},
          "struct_layout([('a', 'char'), ('b', 'double'), ('c', 'char')])",
          "b waits for offset 8, and the size rounds up to 8 for arrays")
    check(struct_layout([("i", "int"), ("s", "char[3]"), ("h", "short"), ("d", "double")]),
          {"offsets": {"i": 0, "s": 4, "h": 8, "d": 16}, "size": 24, "align": 8, "padding": 7},
          "struct_layout({int i; char s[3]; short h; double d})", "ctypes: size 24, offsets [0, 4, 8, 16]")
    check(struct_layout([("c", "char"), ("s", "short[3]")]),
          {"offsets": {"c": 0, "s": 2}, "size": 8, "align": 2, "padding": 1},
          "struct_layout({char c; short s[3]})", "an array aligns like its element")


@grade(struct_layout, "correctness", points=3,
       hint="Round the cursor up to each field's alignment; round the end to the largest.")
@settings(max_examples=120)
@given(fields=field_lists)
def test_struct_layout_matches_ctypes(fields):
    offsets, size = ctypes_layout(fields)
    got = struct_layout(fields)
    call = f"struct_layout({fields})"
    assert isinstance(got, dict), f"{call} = {got!r}: a dict with offsets, size, align, padding"
    check(got.get("offsets"), offsets, f"{call}['offsets']", "ctypes (the C ABI) places the fields there")
    assert_exact(got.get("size"), size, f"{call}['size']", why="ctypes.sizeof of the same struct", unit="B")
    fields_bytes = sum(ctypes.sizeof(t) for _, t in ctypes_layout_cls(fields)._fields_)
    assert_exact(got.get("padding"), size - fields_bytes, f"{call}['padding']", why="size − Σ field sizes", unit="B")


def ctypes_layout_cls(fields):
    members = []
    for name, ctype in fields:
        base, _, count = ctype.partition("[")
        members.append((name, CTYPES[base] * int(count[:-1]) if count else CTYPES[base]))
    return type("S", (ctypes.Structure,), {"_fields_": members})


@grade(struct_layout, "correctness", points=1, validation=True,
       hint="What should an unknown type or a repeated name do?")
def test_struct_layout_rejects():
    assert_rejects_all(struct_layout, [
        (([("a", "char"), ("b", "quad")],), "fields[1]"),
        (([("a", "char"), ("a", "int")],), "fields[1]"),
        (([("a", "int"), ("b",)],), "fields[1]"),
        (([("a", "char[x]")],), "fields[0]"),
    ])


@grade(best_field_order, "correctness", points=2, hint="Which fields leave no hole if they come first?")
def test_best_field_order_worked_example():
    fields = [("a", "char"), ("b", "double"), ("c", "char")]
    check(best_field_order(fields), [("b", "double"), ("a", "char"), ("c", "char")],
          f"best_field_order({fields})", "decreasing alignment, ties in declaration order: 16 bytes instead of 24")
    fields = [("x", "char[3]"), ("p", "pointer"), ("s", "short"), ("f", "float"), ("d", "double")]
    want = [("p", "pointer"), ("d", "double"), ("f", "float"), ("s", "short"), ("x", "char[3]")]
    check(best_field_order(fields), want,
          f"best_field_order({fields})", "an array aligns like its element (char[3]: 1)")


@grade(best_field_order, "correctness", points=2, hint="Is your sort stable, and is it by alignment (not by size)?")
@settings(max_examples=100)
@given(fields=field_lists)
def test_best_field_order_never_larger(fields):
    got = best_field_order(fields)
    call = f"best_field_order({fields})"
    aligns = {name: ctypes.alignment(t) for name, t in ctypes_layout_cls(fields)._fields_}
    want = sorted(fields, key=lambda f: -aligns[f[0]])
    check([tuple(f) for f in got], want, call, "a stable sort by decreasing alignment")
    assert ctypes.sizeof(ctypes_layout_cls(want)) <= ctypes.sizeof(ctypes_layout_cls(fields)), call


@grade(best_field_order, "correctness", points=1, validation=True, hint="The same checks as struct_layout.")
def test_best_field_order_rejects():
    assert_rejects(best_field_order, ([("a", "char"), ("b", "vector")],), "fields[1]")
    assert_rejects(best_field_order, ([("a", "char"), ("a", "char")],), "fields[1]")


# ---- parse_numactl / gpu_cpu_affinity -----------------------------------------------------------


@grade(parse_numactl, "correctness", points=3, hint="Which lines carry a node's CPUs, its memory, and the distances?")
def test_parse_numactl_fixtures():
    got = parse_numactl(TWO_NODE)
    want = {"nodes": {0: {"cpus": NODE0, "size_mb": 515839, "free_mb": 498213},
                      1: {"cpus": NODE1, "size_mb": 516088, "free_mb": 501122}},
            "distances": [[10, 21], [21, 10]]}
    check(got, want, "parse_numactl(<2 nodes × 32 CPUs>)", "the fixture's nodes, sizes in MB and SLIT distances")
    got = parse_numactl(FOUR_NODE)
    check(got["nodes"][3], {"cpus": [], "size_mb": 131072, "free_mb": 131050}, "parse_numactl(<4 nodes>)['nodes'][3]",
          "node 3 has memory and no CPUs (an empty 'cpus:' line)")
    check(got["distances"][3], [255, 255, 255, 10], "parse_numactl(<4 nodes>)['distances'][3]", "the last row")
    check(sorted(got["nodes"]), [0, 1, 2, 3], "sorted(parse_numactl(<4 nodes>)['nodes'])", "four nodes")
    check(parse_numactl(ONE_NODE), {"nodes": {0: {"cpus": list(range(8)), "size_mb": 31817, "free_mb": 20470}},
                                    "distances": [[10]]}, "parse_numactl(<1 node>)", "a single-socket machine")


def render(nodes: dict, distances, rng: random.Random) -> str:
    """numactl -H text with random spacing (tabs, runs of spaces, trailing blanks) and node blocks in any order."""
    def sp():
        return rng.choice([" ", "  ", "\t", " \t "])
    lines = [f"available: {len(nodes)} nodes (0-{len(nodes) - 1})"]
    for node in rng.sample(sorted(nodes), len(nodes)):
        info = nodes[node]
        lines.append(f"node {node} cpus:" + "".join(sp() + str(c) for c in info["cpus"]) + rng.choice(["", " "]))
        lines.append(f"node {node} size:{sp()}{info['size_mb']} MB")
        lines.append(f"node {node} free:{sp()}{info['free_mb']} MB")
    lines.append("node distances:")
    lines.append("node" + "".join(sp() + str(n) for n in sorted(nodes)))
    for n, row in zip(sorted(nodes), distances, strict=True):
        lines.append(f"{sp()}{n}:" + "".join(sp() + str(d) for d in row) + rng.choice(["", " "]))
    return "\n".join(lines) + "\n"


@grade(parse_numactl, "correctness", points=2, hint="Do you split on any whitespace, and key nodes by their number?")
@settings(max_examples=60)
@given(seed=st.integers(0, 2**32 - 1), n_nodes=st.integers(1, 4))
def test_parse_numactl_variants(seed, n_nodes):
    rng = random.Random(seed)
    all_cpus = list(range(8 * n_nodes))
    rng.shuffle(all_cpus)
    nodes = {}
    for k in range(n_nodes):
        cpus = sorted(all_cpus[8 * k: 8 * k + rng.randint(0, 8)])
        nodes[k] = {"cpus": cpus, "size_mb": rng.randint(0, 10**6), "free_mb": rng.randint(0, 10**6)}
    distances = [[10 if i == j else rng.choice([11, 12, 20, 21, 32]) for j in range(n_nodes)] for i in range(n_nodes)]
    text = render(nodes, distances, rng)
    check(parse_numactl(text), {"nodes": nodes, "distances": distances}, f"parse_numactl({text!r})",
          "the same nodes and distances, whatever the spacing and block order")


@grade(parse_numactl, "correctness", points=1, validation=True,
       hint="What does numactl print on a machine without NUMA?")
def test_parse_numactl_rejects():
    assert_rejects_all(parse_numactl, [
        (("No NUMA available on this system\n",), "text"),
        ((TWO_NODE.replace("available: 2 nodes (0-1)\n", ""),), "text"),
        ((TWO_NODE.replace("node 0 cpus: 0 1", "node 0 cpus: 0 x1"),), "text"),
        ((TWO_NODE.replace("node 1 size: 516088 MB", "node 1 size: lots MB"),), "text"),
        ((None,), "text"),
    ])


@grade(gpu_cpu_affinity, "correctness", points=3, hint="What does numa_node = -1 tell you about where the GPU hangs?")
def test_gpu_cpu_affinity_fixtures():
    gpus = {"0000:18:00.0": 0, "0000:3b:00.0": 0, "0000:86:00.0": 1, "0000:af:00.0": -1}
    got = gpu_cpu_affinity(TWO_NODE, gpus)
    want = {"0000:18:00.0": NODE0, "0000:3b:00.0": NODE0, "0000:86:00.0": NODE1, "0000:af:00.0": list(range(64))}
    check(got, want, f"gpu_cpu_affinity(<2 nodes>, {gpus})", "the node's CPUs; -1 (no affinity reported) → all 64")
    got = gpu_cpu_affinity(FOUR_NODE, {"0000:c1:00.0": 2, "0000:01:00.0": -1})
    check(got["0000:c1:00.0"], list(range(48, 72)) + list(range(120, 144)), "gpu_cpu_affinity(<4 nodes>, node 2)",
          "node 2's CPUs")
    check(got["0000:01:00.0"], list(range(144)), "gpu_cpu_affinity(<4 nodes>, -1)", "every CPU, sorted")


@grade(gpu_cpu_affinity, "correctness", points=1, validation=True,
       hint="What if sysfs names a node numactl never listed?")
def test_gpu_cpu_affinity_rejects():
    assert_rejects(gpu_cpu_affinity, (TWO_NODE, {"0000:18:00.0": 2}), "gpu_numa")
    assert_rejects(gpu_cpu_affinity, (TWO_NODE, {"0000:18:00.0": "0"}), "gpu_numa")
    assert_rejects(gpu_cpu_affinity, (TWO_NODE, [("0000:18:00.0", 0)]), "gpu_numa")
    assert_rejects(gpu_cpu_affinity, ("numactl: command not found", {"0000:18:00.0": 0}), "text")
