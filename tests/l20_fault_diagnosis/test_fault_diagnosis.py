"""L20 · Xid triage from dmesg, slow GPUs in `dcgmi dmon`, the straggler inversion, NCCL hang reports."""

from __future__ import annotations

import math
import random
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from grader.kit import assert_rejects_all, grade, learner

UNIT = "l20_fault_diagnosis"
parse_xid = learner(UNIT, "diagnosis", "parse_xid")
triage_xid = learner(UNIT, "diagnosis", "triage_xid")
parse_dcgm_dmon = learner(UNIT, "diagnosis", "parse_dcgm_dmon")
robust_z = learner(UNIT, "diagnosis", "robust_z")
slow_gpus = learner(UNIT, "diagnosis", "slow_gpus")
find_straggler = learner(UNIT, "diagnosis", "find_straggler")
nccl_hang_report = learner(UNIT, "diagnosis", "nccl_hang_report")

FIXTURES = Path(__file__).parent / "fixtures"
DMESG = (FIXTURES / "dmesg_xid.txt").read_text()
DMON = (FIXTURES / "dcgm_dmon.txt").read_text()
NCCL_LOGS = {r: (FIXTURES / "nccl" / f"rank{r}.log").read_text() for r in range(8)}
# DGX H100 bus ids as `nvidia-smi --query-gpu=index,pci.bus_id --format=csv` prints them
PCI_TO_GPU = {f"00000000:{bus}:00.0": i for i, bus in enumerate(["18", "2A", "3A", "5D", "9A", "AB", "BA", "DB"])}
COMPUTE = [80, 82, 79, 81, 130, 80, 83, 78]
WAIT = [50, 48, 51, 49, 0.5, 50, 47, 52]
COMM_A, COMM_B = "0x55d1c8a0", "0x55d1d000"


def as_list(x: object) -> object:
    """Lists and tuples alike, nested too: the contract names the items, not the sequence type."""
    return [as_list(v) for v in x] if isinstance(x, list | tuple) else x


def ev(pci, xid, pid=None, name=None):
    return {"pci": pci, "xid": xid, "pid": pid, "name": name}


# ---- oracles -----------------------------------------------------------------------------------


def named_records(got: object, want: dict) -> object:
    """``{key: record}``: the keys are data (exact), each record is read on the fields the contract names
    (an extra field in the learner's record is not a mistake)."""
    if not isinstance(got, dict):
        return got
    return {k: {f: v[f] for f in want[k] if f in v} if isinstance(v, dict) and isinstance(want.get(k), dict) else v
            for k, v in got.items()}


def oracle_z(xs):
    """Modified z of Iglewicz & Hoaglin, written from sorted lists (no statistics.median)."""
    def med(v):
        v = sorted(v)
        n = len(v)
        return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2
    m = med(xs)
    mad = med([abs(x - m) for x in xs])
    if mad == 0:
        return [0.0 if x == m else (math.inf if x > m else -math.inf) for x in xs]
    return [0.6745 * (x - m) / mad for x in xs]


def z_close(got, want):
    if math.isinf(want):
        return got == want
    return math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-9)


# ---- parse_xid ---------------------------------------------------------------------------------


XID_EVENTS = [
    ev("0000:18:00", 31, 88001, "python"), ev("0000:18:00", 45, 88001, "python"),
    ev("0000:2a:00", 149, 88002, "python"), ev("0000:3a:00", 74),
    ev("0000:9a:00", 63), ev("0000:ab:00", 79), ev("0000:db:00", 48, 91210, "pt_main_thread"),
    ev("0000:db:00", 95, 91210, "pt_main_thread"),
]


@grade(parse_xid, "correctness", points=3,
       hint="Only `NVRM: Xid (PCI:...)` lines are events: SXid, the bus echo and a cut line are not.")
def test_parse_xid_fixture():
    got = parse_xid(DMESG)
    assert isinstance(got, list | tuple), f"parse_xid(<dmesg fixture>) returned {type(got).__name__}, expected a list"
    assert len(got) == 8, (f"parse_xid(<dmesg fixture>) found {len(got)} events, expected 8: the NVSwitch SXid "
                           f"lines, the 'GPU has fallen off the bus' echoes and the truncated last line are not Xids")
    for i, (g, w) in enumerate(zip(got, XID_EVENTS, strict=True)):
        assert g == w, (f"parse_xid(<dmesg fixture>)[{i}] = {g}, expected {w} (pci lower case without the .0 "
                        f"function; pid='<unknown>' and name=<unknown> are None; no pid field → None)")


PREFIXES = ["", "[ 8812.447613] ", "Mar 05 10:21:33 gpu-node-87 kernel: ", "[Tue Mar  5 10:21:33 2024] "]


@grade(parse_xid, "correctness", points=2,
       hint="The prefix before NVRM varies with the tool (dmesg -T, dmesg, journalctl); the Xid part does not.")
@settings(max_examples=25)
@given(prefix=st.sampled_from(PREFIXES),
       bus=st.integers(0, 255), xid=st.integers(1, 160), pid=st.one_of(st.none(), st.integers(1, 4_000_000)),
       upper=st.booleans(), func=st.booleans())
def test_parse_xid_variants(prefix, bus, xid, pid, upper, func):
    pci = f"0000:{bus:02x}:00"
    shown = (pci.upper() if upper else pci) + (".0" if func else "")
    pid_field = f"pid={pid}, name=torchrun, " if pid is not None else "pid='<unknown>', name=<unknown>, "
    line = f"{prefix}NVRM: Xid (PCI:{shown}): {xid}, {pid_field}Ch 00000010"
    got = parse_xid(line + "\n" + f"{prefix}NVRM: GPU at PCI:{shown}: GPU-0f1e2d3c")
    want = [ev(pci, xid, pid, "torchrun" if pid is not None else None)]
    assert as_list(got) == want, f"parse_xid({line!r}) = {got}, expected {want}"


@grade(parse_xid, "correctness", points=1, validation=True, hint="Raise ValueError naming dmesg_text.")
def test_parse_xid_rejects_bad_arguments():
    assert_rejects_all(parse_xid, [((None,), "dmesg_text"), ((b"NVRM: Xid",), "dmesg_text")])


# ---- triage_xid --------------------------------------------------------------------------------


TRIAGE = {
    0: {"action": "app", "xids": [31, 45]}, 1: {"action": "investigate", "xids": [149]},
    2: {"action": "reset_gpu", "xids": [74]}, 4: {"action": "monitor", "xids": [63]},
    5: {"action": "drain_node", "xids": [79]}, 7: {"action": "drain_node", "xids": [48, 95]},
}


@grade(triage_xid, "correctness", points=3,
       hint="Xid 31 is an MMU fault (the app), 74 is NVLink (reset), 48/95 are uncorrectable ECC (drain).")
def test_triage_xid_fixture():
    got = triage_xid(DMESG, PCI_TO_GPU)
    assert named_records(got, TRIAGE) == TRIAGE, (
        f"triage_xid(<dmesg fixture>, <nvidia-smi bus ids>) = {got}, expected {TRIAGE} "
        f"(most severe action per GPU; bus ids compared case-insensitively, without .0)")
    lower = {f"0000:{k[9:11].lower()}:00": v for k, v in PCI_TO_GPU.items()}
    assert named_records(triage_xid(DMESG, lower), TRIAGE) == TRIAGE, (
        "triage_xid must accept kernel-style keys 0000:18:00 too")


ACTIONS = ("app", "monitor", "investigate", "reset_gpu", "drain_node")
KNOWN = {13: "app", 31: "app", 43: "app", 45: "app", 63: "monitor", 92: "monitor", 94: "monitor",
         74: "reset_gpu", 119: "reset_gpu", 120: "reset_gpu", 48: "drain_node", 64: "drain_node",
         79: "drain_node", 95: "drain_node"}


@grade(triage_xid, "correctness", points=2,
       hint="The verdict of a GPU depends on the set of its codes, not on their order in the log.")
@settings(max_examples=25)
@given(events=st.lists(st.tuples(st.integers(0, 7), st.sampled_from([*KNOWN, 8, 149, 154])), min_size=1, max_size=12),
       seed=st.integers(0, 2**16))
def test_triage_xid_order_free(events, seed):
    buses = ["18", "2a", "3a", "5d", "9a", "ab", "ba", "db"]
    lines = [f"[{i}.5] NVRM: Xid (PCI:0000:{buses[g]}:00): {x}, pid=7{i}, name=python, detail" for i, (g, x) in
             enumerate(events)]
    random.Random(seed).shuffle(lines)
    noise = ["[0.1] nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 12028, Non-fatal", "[0.2] NVRM: loading driver"]
    text = "\n".join(noise[:1] + lines + noise[1:])
    want = {}
    for g, x in events:
        want.setdefault(g, set()).add(x)
    want = {g: {"action": max((KNOWN.get(x, "investigate") for x in xs), key=ACTIONS.index), "xids": sorted(xs)}
            for g, xs in want.items()}
    got = triage_xid(text, PCI_TO_GPU)
    assert named_records(got, want) == want, f"triage_xid on events {events} (shuffled) = {got}, expected {want}"


@grade(triage_xid, "correctness", points=1, validation=True,
       hint="Raise ValueError naming pci_to_gpu (not a dict, bad key or index, or a bus it lacks) or dmesg_text.")
def test_triage_xid_rejects_bad_arguments():
    missing = {k: v for k, v in PCI_TO_GPU.items() if v != 7}
    assert_rejects_all(triage_xid, [
        ((DMESG, missing), "pci_to_gpu"), ((DMESG, [0, 1]), "pci_to_gpu"), ((DMESG, {"gpu0": 0}), "pci_to_gpu"),
        ((DMESG, {**PCI_TO_GPU, "0000:18:00": -1}), "pci_to_gpu"), ((None, PCI_TO_GPU), "dmesg_text"),
    ])


# ---- parse_dcgm_dmon ---------------------------------------------------------------------------


FIELDS = ["TMPTR", "POWER", "SMCLK", "MMCLK", "GPUTL", "SMACT"]


@grade(parse_dcgm_dmon, "correctness", points=3,
       hint="The header repeats; the units row is not data; N/A is a missing sample, not a zero.")
def test_parse_dcgm_dmon_fixture():
    got = parse_dcgm_dmon(DMON)
    assert sorted(got) == list(range(8)), f"parse_dcgm_dmon(<dmon fixture>) has GPUs {sorted(got)}, expected 0..7"
    for gpu in range(8):
        assert list(got[gpu]) == FIELDS, f"GPU {gpu}: fields {list(got[gpu])}, expected {FIELDS} in header order"
        assert all(len(v) == 3 for v in got[gpu].values()), f"GPU {gpu}: expected 3 samples per field, got {got[gpu]}"
    assert as_list(got[6]["SMCLK"]) == [765.0] * 3 and as_list(got[6]["TMPTR"]) == [89.0] * 3, f"GPU 6: {got[6]}"
    assert as_list(got[2]["SMACT"]) == [None, 0.916, 0.914], (
        f"GPU 2 SMACT = {got[2]['SMACT']}, expected [None, 0.916, 0.914]")
    assert as_list(got[0]["POWER"]) == [389.412, 391.006, 390.557], f"GPU 0 POWER = {got[0]['POWER']}"


@grade(parse_dcgm_dmon, "correctness", points=2,
       hint="Split on any whitespace; take the fields from the header actually printed.")
@settings(max_examples=20)
@given(fields=st.lists(st.sampled_from(FIELDS), min_size=1, max_size=6, unique=True),
       rows=st.lists(st.tuples(st.integers(0, 7), st.integers(0, 3)), min_size=1, max_size=10),
       pad=st.sampled_from([" ", "  ", "\t", " \t  "]))
def test_parse_dcgm_dmon_variants(fields, rows, pad):
    lines = ["#Entity" + pad + pad.join(fields), "ID" + pad + pad.join("X" for _ in fields)]
    want = {}
    for k, (gpu, salt) in enumerate(rows):
        values = [None if (salt == 0 and j == 0) else float(100 * k + 10 * j + salt) for j in range(len(fields))]
        lines.append(pad + "GPU" + pad + str(gpu) + pad + pad.join("N/A" if v is None else f"{v:g}" for v in values))
        for f, v in zip(fields, values, strict=True):
            want.setdefault(gpu, {g: [] for g in fields})[f].append(v)
    got = parse_dcgm_dmon("\n".join(lines) + "\n")
    assert got == want, "parse_dcgm_dmon on\n" + "\n".join(lines) + f"\nreturned {got}, expected {want}"


@grade(parse_dcgm_dmon, "correctness", points=1, validation=True,
       hint="A GPU row before the header, with a value missing or a word for a number: ValueError naming text.")
def test_parse_dcgm_dmon_rejects_bad_arguments():
    head = "#Entity  TMPTR  SMCLK\nID  C  MHZ\n"
    assert_rejects_all(parse_dcgm_dmon, [
        ((None,), "text"), (("GPU 0   45  1410\n",), "text"), ((head + "GPU 0   45\n",), "text"),
        ((head + "GPU 0   45  fast\n",), "text"), ((head + "GPU 0   45  1410  7\n",), "text"),
    ])


# ---- robust_z ----------------------------------------------------------------------------------


@grade(robust_z, "correctness", points=2,
       hint="Median of 8 values: the mean of the 4th and 5th. MAD is a median too, of |x − median|.")
def test_robust_z_worked_numbers():
    got = robust_z(COMPUTE)
    assert math.isclose(got[4], 22.2585, rel_tol=1e-12), (f"robust_z({COMPUTE})[4] = {got[4]}, expected 22.2585 "
                                                          "(median 80.5, MAD 1.5, 0.6745 · 49.5 / 1.5)")
    assert math.isclose(got[0], -0.22483333333333333, rel_tol=1e-9), f"robust_z({COMPUTE})[0] = {got[0]}"
    flat = robust_z([80, 80, 80, 130, 10])
    assert as_list(flat) == [0.0, 0.0, 0.0, math.inf, -math.inf], (
        f"robust_z([80, 80, 80, 130, 10]) = {flat}: MAD is 0, so 0 at the median and ±inf elsewhere")




@grade(robust_z, "correctness", points=2, hint="z depends on the values only through median and MAD.")
@settings(max_examples=30)
@given(xs=st.lists(st.integers(-1000, 1000), min_size=1, max_size=12), shift=st.integers(-10**6, 10**6),
       scale=st.integers(1, 50))
def test_robust_z_oracle_and_invariance(xs, shift, scale):
    got = robust_z(xs)
    want = oracle_z(xs)
    assert len(got) == len(xs) and all(z_close(g, w) for g, w in zip(got, want, strict=True)), (
        f"robust_z({xs}) = {got}, expected {want}")
    moved = [shift + scale * x for x in xs]
    again = robust_z(moved)
    assert all(z_close(g, w) for g, w in zip(again, want, strict=True)), (
        f"robust_z({moved}) = {again}: shifting by {shift} and scaling by {scale} must not change z ({want})")


@grade(robust_z, "correctness", points=1, validation=True, hint="Raise ValueError naming values or values[i].")
def test_robust_z_rejects_bad_arguments():
    assert_rejects_all(robust_z, [(([],), "values"), (("123",), "values"), (([1.0, math.nan],), "values[1]"),
                                  (([1.0, True],), "values[1]"), ((None,), "values")])


# ---- slow_gpus ---------------------------------------------------------------------------------


@grade(slow_gpus, "correctness", points=3,
       hint="Average each GPU's samples without the N/A ones; a slow GPU is low on clocks, high on temperature.")
def test_slow_gpus_fixture():
    dmon = parse_dcgm_dmon(DMON)
    for field in ("SMCLK", "SMACT", "POWER", "TMPTR"):
        got = slow_gpus(dmon, field)
        assert as_list(got) == [6], (f"slow_gpus(<dmon fixture>, {field!r}) = {got}, expected [6] "
                            "(GPU 6 throttled: 765 MHz, 89 C)")
    assert as_list(slow_gpus(dmon, "MMCLK")) == [], "MMCLK is 1593 on every GPU: nobody is an outlier"
    assert as_list(slow_gpus(dmon)) == [6], "the default field is SMCLK"
    assert math.isclose(1 - 765 / 1410, 0.4574, abs_tol=1e-4) and math.isclose(1 - 78_000 / 120_000, 0.35)


@grade(slow_gpus, "correctness", points=2, hint="Low is slow for clocks and activity: the sign of z matters.")
@settings(max_examples=25)
@given(n=st.integers(4, 16), data=st.data())
def test_slow_gpus_planted(n, data):
    base = [1410.0 - data.draw(st.integers(0, 15)) for _ in range(n)]
    slow = data.draw(st.sets(st.integers(0, n - 1), max_size=max(1, (n - 1) // 3)))
    fast = data.draw(st.integers(0, n - 1))
    for g in slow:
        base[g] = data.draw(st.floats(600, 900))
    if fast not in slow:
        base[fast] = 1410.0 + 400.0  # boosted far above the others: an outlier, but not a slow one
    dmon = {g: {"SMCLK": [v, None, v]} for g, v in enumerate(base)}
    want = [g for g, z in enumerate(oracle_z(base)) if z < -3.5]
    got = slow_gpus(dmon, "SMCLK")
    assert as_list(got) == want, (f"slow_gpus({dmon}, 'SMCLK') = {got}, expected {want} "
                                  f"(planted slow: {sorted(slow)}, flagged where z < -3.5)")


@grade(slow_gpus, "correctness", points=1, validation=True,
       hint="Raise ValueError naming dmon, field or threshold.")
def test_slow_gpus_rejects_bad_arguments():
    dmon = parse_dcgm_dmon(DMON)
    assert_rejects_all(slow_gpus, [
        ((dmon, "FBUSD"), "field"), ((dmon, "SMCLK", 0), "threshold"), ((dmon, "SMCLK", math.inf), "threshold"),
        (({}, "SMCLK"), "dmon"), (([1410.0], "SMCLK"), "dmon"),
    ])


# ---- find_straggler ----------------------------------------------------------------------------


@grade(find_straggler, "correctness", points=3,
       hint="The culprit computes longest and waits least: the others wait for it.")
def test_find_straggler_worked_numbers():
    got = find_straggler(COMPUTE, WAIT)
    assert got["culprit"] == 4 and got["confirmed"] is True and math.isclose(got["z"], 22.2585, rel_tol=1e-12), (
        f"find_straggler({COMPUTE}, {WAIT}) = {got}, expected culprit 4, z 22.2585, confirmed True")
    got = find_straggler([80, 80, 80, 130], [50, 50, 50, 0])
    named = {k: got.get(k) for k in ("culprit", "z", "confirmed")} if isinstance(got, dict) else got
    assert named == {"culprit": 3, "z": math.inf, "confirmed": True}, (
        f"find_straggler([80, 80, 80, 130], [50, 50, 50, 0]) = {got}, expected culprit 3, z inf (MAD 0), confirmed")
    waits_longest = [50, 48, 51, 49, 60, 50, 47, 52]
    got = find_straggler(COMPUTE, waits_longest)
    assert got["culprit"] == 4 and got["confirmed"] is False, (
        f"find_straggler({COMPUTE}, {waits_longest}) = {got}: rank 4 computes longest but also waits longest, "
        "so the inversion law does not confirm it")


@grade(find_straggler, "correctness", points=2,
       hint="Others' wait = the culprit's extra compute; the culprit's wait is (near) zero.")
@settings(max_examples=30)
@given(n=st.integers(3, 32), data=st.data())
def test_find_straggler_planted(n, data):
    compute = [data.draw(st.floats(78, 83)) for _ in range(n)]
    culprit = data.draw(st.integers(0, n - 1))
    compute[culprit] = max(compute) + data.draw(st.floats(20, 100))
    wait = [compute[culprit] - c for c in compute]
    got = find_straggler(compute, wait)
    want_z = oracle_z(compute)[culprit]
    assert got["culprit"] == culprit and got["confirmed"] is True and z_close(got["z"], want_z), (
        f"find_straggler({compute}, {wait}) = {got}, expected culprit {culprit}, z {want_z}, confirmed")
    tied = find_straggler([90.0] * n, [0.0] * n)
    assert tied["culprit"] == 0 and tied["confirmed"] is False, f"all equal → culprit 0 (first), unconfirmed: {tied}"


@grade(find_straggler, "correctness", points=1, validation=True,
       hint="Raise ValueError naming compute_ms, wait_ms (or the index) or threshold.")
def test_find_straggler_rejects_bad_arguments():
    assert_rejects_all(find_straggler, [
        (([], []), "compute_ms"), (([80, -1], [1, 2]), "compute_ms[1]"), (([80, 90], [1]), "wait_ms"),
        (([80, 90], [1, math.inf]), "wait_ms[1]"), (([80, 90], [1, 2], -3.5), "threshold"),
    ])


# ---- nccl_hang_report --------------------------------------------------------------------------


@grade(nccl_hang_report, "correctness", points=3,
       hint="opCount is hexadecimal: 1f4 > ff. The [N] after the pid is the local device, not the rank.")
def test_nccl_hang_report_fixture():
    got = nccl_hang_report(NCCL_LOGS)
    want = {COMM_A: {"last_op": 500, "collective": "AllReduce", "lagging": [7], "mismatch": [5]},
            COMM_B: {"last_op": 4, "collective": "Broadcast", "lagging": [7], "mismatch": []}}
    assert named_records(got, want) == want, f"nccl_hang_report(<8 rank logs>) = {got}, expected {want}"


@grade(nccl_hang_report, "correctness", points=3,
       hint="A rank that never logged the communicator is behind too; a truncated line counts for nothing.")
@settings(max_examples=20)
@given(n=st.integers(2, 12), data=st.data())
def test_nccl_hang_report_planted(n, data):
    top = data.draw(st.integers(0xf0, 0x110))
    behind = data.draw(st.sets(st.integers(0, n - 1), max_size=n - 1))
    silent = data.draw(st.sets(st.sampled_from(sorted(behind)), max_size=1)) if behind else set()
    at_top = [r for r in range(n) if r not in behind]
    odd = data.draw(st.sampled_from(at_top)) if len(at_top) >= 3 else None
    logs = {}
    for r in range(n):
        last = top if r not in behind else top - data.draw(st.integers(1, 0x20))
        lines = [f"h:1:{r} [{r % 8}] NCCL INFO comm 0xabc rank {r} nranks {n} - Init COMPLETE"]
        for op in range(max(0, last - 3), last + 1):
            name = "ReduceScatter" if (r == odd and op == top) else "AllReduce"
            lines.append(f"h:1:{r} [{r % 8}] NCCL INFO {name}: opCount {op:x} sendbuff 0x1 recvbuff 0x2 count 8 "
                         f"datatype 7 op 0 root 0 comm 0xabc [nranks={n}] stream 0x3")
        lines.append(f"h:1:{r} [{r % 8}] NCCL INFO AllReduce: opCount {top + 1:x} sendbuff 0x1")
        logs[r] = "" if r in silent else "\n".join(data.draw(st.permutations(lines)))
    want = {"0xabc": {"last_op": top, "collective": "AllReduce", "lagging": sorted(behind),
                      "mismatch": [odd] if odd is not None else []}}
    got = nccl_hang_report(logs)
    assert named_records(got, want) == want, (
        f"nccl_hang_report on planted logs (behind {sorted(behind)}, odd {odd}) = {got}, expected {want}")


@grade(nccl_hang_report, "correctness", points=1, validation=True,
       hint="Raise ValueError naming rank_logs (not a dict, empty, bad rank) or rank_logs[r] (not a str).")
def test_nccl_hang_report_rejects_bad_arguments():
    assert_rejects_all(nccl_hang_report, [
        (({},), "rank_logs"), ((["log"],), "rank_logs"), (({-1: ""},), "rank_logs"), (({"0": ""},), "rank_logs"),
        (({0: None},), "rank_logs[0]"),
    ])
