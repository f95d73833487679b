"""L37 · `kubectl describe node` (allocatable − allocated), the NVRM API-mismatch message, a CDI spec."""

from __future__ import annotations

import json
import random
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from grader.kit import assert_rejects_all, grade, learner

UNIT = "l37_k8s_gpu"
parse_describe_node = learner(UNIT, "k8s_gpu", "parse_describe_node")
driver_mismatch = learner(UNIT, "k8s_gpu", "driver_mismatch")
cdi_spec = learner(UNIT, "k8s_gpu", "cdi_spec")

FIXTURES = Path(__file__).parent / "fixtures"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


def counts(capacity: int, allocatable: int, allocated: int) -> dict:
    return {"capacity": capacity, "allocatable": allocatable, "allocated": allocated, "free": allocatable - allocated}


def check_counts(got: object, want: dict, call: str) -> None:
    assert isinstance(got, dict), f"{call} returned {type(got).__name__}, expected a dict with keys {sorted(want)}"
    assert set(got) == set(want), f"{call} has keys {sorted(got)}, expected exactly {sorted(want)}"
    for key, value in want.items():
        assert type(got[key]) is int, f"{call}[{key!r}] = {got[key]!r}, expected the exact int {value}"
    assert got == want, (
        f"{call} = {got}, expected {want} (free = Allocatable − the Requests under Allocated "
        f"resources; Capacity still counts an unhealthy GPU)"
    )


# ---- parse_describe_node -----------------------------------------------------------------------

H100 = fixture("describe_h100_unhealthy.txt")
GPU_ROW = "  nvidia.com/gpu     4             4\n"


@grade(
    parse_describe_node,
    "correctness",
    points=3,
    hint="Can the scheduler place a pod on a GPU that the device plugin reported Unhealthy?",
)
def test_describe_worked_example():
    check_counts(parse_describe_node(H100), counts(8, 7, 4), "parse_describe_node(<DGX H100, one GPU unhealthy>)")
    assert GPU_ROW in H100
    idle = H100.replace(GPU_ROW, "")
    check_counts(parse_describe_node(idle), counts(8, 7, 0), "parse_describe_node(<the same node, no GPU pod>)")


MIG = fixture("describe_a100_mig_mixed.txt")
SLICED = fixture("describe_a10_timeslice.txt")
CASES = [
    (MIG, "nvidia.com/mig-1g.10gb", counts(14, 14, 9), "A100 MIG (mixed strategy)"),
    (MIG, "nvidia.com/mig-3g.40gb", counts(4, 4, 3), "A100 MIG (mixed strategy)"),
    (MIG, "nvidia.com/gpu", counts(4, 4, 1), "A100 MIG (mixed strategy)"),
    (SLICED, "nvidia.com/gpu.shared", counts(16, 16, 11), "A10 time-sliced, renamed resource"),
    (SLICED, "nvidia.com/gpu", counts(0, 0, 0), "A10 time-sliced, renamed resource"),
    (fixture("describe_plugin_down.txt"), "nvidia.com/gpu", counts(4, 0, 0), "L40S, device plugin down"),
]


@grade(
    parse_describe_node,
    "correctness",
    points=2,
    hint="Is nvidia.com/gpu.shared the same resource as nvidia.com/gpu? Which rows belong to which section?",
)
def test_describe_mig_timeslice_and_zero_nodes():
    for text, resource, want, node in CASES:
        check_counts(parse_describe_node(text, resource), want, f"parse_describe_node(<{node}>, {resource!r})")
    check_counts(
        parse_describe_node(MIG, resource="nvidia.com/mig-1g.10gb"),
        counts(14, 14, 9),
        "parse_describe_node(<A100 MIG>, resource='nvidia.com/mig-1g.10gb')",
    )


OTHER_ROWS = [
    ("cpu", "224", "223500m", "32 (14%)"),
    ("memory", "2113411928Ki", "2112285528Ki", "256Gi (12%)"),
    ("ephemeral-storage", "3750853464Ki", "3456809525846", "0 (0%)"),
    ("hugepages-1Gi", "0", "0", "0 (0%)"),
    ("pods", "110", "110", None),
]


def describe_text(
    resource: str, cap: int, alloc: int, req: int | None, others: list[tuple[str, int, int, int]], rng: random.Random
) -> str:
    """One node as `kubectl describe node` lays it out (tabwriter padding of any width)."""
    rows = [(n, c, a, r) for n, c, a, r in OTHER_ROWS]
    rows += [(n, str(c), str(a), str(r)) for n, c, a, r in others]
    rows.append((resource, str(cap), str(alloc), None if req is None else str(req)))
    rng.shuffle(rows)
    width = max(len(n) for n, *_ in rows) + 2 + rng.randrange(4)
    lines = [
        "Name:               gpu-node-" + str(rng.randrange(1000)),
        "Labels:             kubernetes.io/os=linux",
        f"                    {resource}.count={cap}",
        f"                    {resource}.product=NVIDIA-H100-80GB-HBM3",
        "Taints:             <none>",
        "Capacity:",
    ]
    lines += [f"  {(n + ':').ljust(width)}{c}" for n, c, _, _ in rows]
    lines.append("Allocatable:")
    lines += [f"  {(n + ':').ljust(width)}{a}" for n, _, a, _ in rows]
    lines += [
        "System Info:",
        "  Kubelet Version:            v1.29.3",
        "Non-terminated Pods:          (1 in total)",
        "Allocated resources:",
        "  (Total limits may be over 100 percent, i.e., overcommitted.)",
    ]
    pad = width + rng.randrange(3)
    lines += [f"  {'Resource'.ljust(pad)}Requests      Limits", f"  {'--------'.ljust(pad)}--------      ------"]
    for n, _, _, r in rows:
        if r is not None:
            lines.append(f"  {n.ljust(pad)}{r.ljust(14)}{r}")
    lines += ["Events:              <none>"]
    return "\n".join(lines) + "\n"


@grade(
    parse_describe_node,
    "correctness",
    points=2,
    hint="Does your parser depend on the order of the rows or the width of the columns?",
)
@settings(max_examples=40)
@given(
    resource=st.sampled_from(["nvidia.com/gpu", "nvidia.com/mig-1g.10gb", "nvidia.com/mig-2g.20gb"]),
    cap=st.integers(0, 16),
    lost=st.integers(0, 16),
    req=st.one_of(st.none(), st.integers(0, 16)),
    shared=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_describe_variants(resource, cap, lost, req, shared, seed):
    rng = random.Random(seed)
    alloc = max(0, cap - lost)
    others = [("nvidia.com/mig-3g.40gb", 2, 2, 1)]
    if shared:  # a renamed time-sliced resource whose name starts with the one asked for
        others.append((resource + ".shared", cap * 4, alloc * 4, 3))
    text = describe_text(resource, cap, alloc, req, others, rng)
    want = counts(cap, alloc, 0 if req is None else req)
    check_counts(parse_describe_node(text, resource), want, f"parse_describe_node(<generated node>, {resource!r})")


@grade(
    parse_describe_node,
    "correctness",
    points=1,
    validation=True,
    hint="A CPU node, two nodes at once, a milli-quantity: which of these can be read as a GPU count?",
)
def test_describe_rejects_bad_input():
    cpu = fixture("describe_cpu_node.txt")
    assert_rejects_all(
        parse_describe_node,
        [
            ((None,), "text"),
            ((H100.encode(),), "text"),
            ((cpu,), "text"),  # no nvidia.com/gpu row under Capacity
            ((H100 + "\n" + MIG,), "text"),  # `kubectl describe nodes`: two nodes in one text
            ((H100, "cpu"), "text"),  # Allocatable cpu 223500m is not a whole count
            ((H100.replace("Capacity:", "Capacity (truncated)"),), "text"),
            ((H100, ""), "resource"),
            ((H100, 7), "resource"),
            ((H100, "nvidia.com/gpu: 8"), "resource"),
        ],
    )


# ---- driver_mismatch ---------------------------------------------------------------------------

MISMATCH_FIXTURES = [
    ("dmesg_mismatch.txt", ("535.129.03", "525.85.12")),
    ("journal_mismatch_repeated.txt", ("550.54.15", "535.129.03")),
    ("dmesg_mismatch_client.txt", ("580.173.02", "580.159.03")),
    ("dmesg_no_mismatch.txt", None),
]


@grade(
    driver_mismatch,
    "correctness",
    points=3,
    hint="The message spans several log lines, each with its own prefix: where do the two versions sit?",
)
def test_mismatch_fixtures():
    for name, want in MISMATCH_FIXTURES:
        got = driver_mismatch(fixture(name))
        assert got == want and (want is None or type(got) is tuple), (
            f"driver_mismatch(<{name}>) = {got!r}, expected {want!r} (the last message wins; the sentence's final "
            f"period is not part of the version; a message cut at the start of the buffer is no match)"
        )


PREFIX_STYLES = ["dmesg", "continuation", "journal", "bare", "ctime"]


def wrapped(lines: list[str], style: str, t: float) -> list[str]:
    if style == "dmesg":
        return [f"[{t:12.6f}] NVRM: {s}" for s in lines]
    if style == "continuation":
        head = f"[{t:12.6f}] "
        return [head + "NVRM: " + lines[0]] + [" " * len(head) + "NVRM: " + s for s in lines[1:]]
    if style == "journal":
        return [f"Apr 04 10:21:33 gpu-node-7 kernel: NVRM: {s}" for s in lines]
    if style == "ctime":
        return [f"[Thu Apr  4 10:21:33 2024] NVRM: {s}" for s in lines]
    return [f"NVRM: {s}" for s in lines]


def message(client: str, module: str, form: str, style: str, t: float) -> list[str]:
    if form == "old":
        lines = [
            f"API mismatch: the client has the version {client}, but",
            f"this kernel module has the version {module}.  Please",
            "make sure that this kernel module and all NVIDIA driver",
            "components have the same version.",
        ]
    elif form == "named":
        lines = [
            "API mismatch: the client 'pt_main_thread' (pid 41877)",
            f"has the version {client}, but this kernel module has",
            f"the version {module}.  Please make sure that this",
            "kernel module and all NVIDIA driver components",
            "have the same version.",
        ]
    else:
        return [
            f"NVRM: API mismatch: the client has the version {client}, but this kernel module has the version {module}."
        ]
    return wrapped(lines, style, t)


VERSIONS = st.builds(
    lambda a, b, c: f"{a}.{b}" + ("" if c is None else f".{c:02d}"),
    st.integers(100, 600),
    st.integers(0, 199),
    st.one_of(st.none(), st.integers(0, 99)),
)
FOREIGN = [
    "[    6.318842] nvidia-uvm: Loaded the UVM driver, major device number 235.",
    "[    6.247311] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 18:56:32 UTC 2023",
    "[  301.774020] NVRM: Xid (PCI:0000:18:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus",
    "[  412.100001] IPv6: ADDRCONF(NETDEV_CHANGE): cali7d2f9a1b3c4: link becomes ready",
]


@grade(
    driver_mismatch,
    "correctness",
    points=2,
    hint="Is your match the same whether the log came from dmesg, dmesg -T or journalctl, old or new driver?",
)
@settings(max_examples=40)
@given(
    msgs=st.lists(
        st.tuples(VERSIONS, VERSIONS, st.sampled_from(["old", "named", "one-line"]), st.sampled_from(PREFIX_STYLES)),
        max_size=3,
    ),
    seed=st.integers(0, 2**16),
)
def test_mismatch_variants(msgs, seed):
    rng = random.Random(seed)
    out: list[str] = []
    for k, (client, module, form, style) in enumerate(msgs):
        out += rng.sample(FOREIGN, rng.randrange(3))
        out += message(client, module, form, style, 800.0 + k)
    out += rng.sample(FOREIGN, rng.randrange(3))
    text = "\n".join(out) + "\n"
    want = (msgs[-1][0], msgs[-1][1]) if msgs else None
    got = driver_mismatch(text)
    assert got == want, f"driver_mismatch({text!r}) = {got!r}, expected {want!r}"


@grade(driver_mismatch, "correctness", points=1, validation=True, hint="Raise ValueError naming dmesg.")
def test_mismatch_rejects_bad_input():
    assert_rejects_all(
        driver_mismatch, [((None,), "dmesg"), ((b"NVRM: API mismatch",), "dmesg"), ((["NVRM: API mismatch"],), "dmesg")]
    )


# ---- cdi_spec ----------------------------------------------------------------------------------

U0 = "GPU-5b8e2a1c-3f4d-4e6a-9b7c-1d2e3f4a5b6c"
U1 = "GPU-9a0b1c2d-7e8f-4a1b-8c2d-3e4f5a6b7c8d"


def node(minor: int) -> dict:
    return {"path": f"/dev/nvidia{minor}", "type": "c", "major": 195, "minor": minor}


def spec(uuids: list[str], minors: list[int], kind: str = "nvidia.com/gpu") -> dict:
    """The expected spec, written entry by entry (an independent rendering of the README's layout)."""
    devices: list[dict] = []
    for i in range(len(uuids)):
        devices += [{"name": name, "containerEdits": {"deviceNodes": [node(minors[i])]}} for name in (str(i), uuids[i])]
    devices.append({"name": "all", "containerEdits": {"deviceNodes": [node(m) for m in minors]}})
    shared = [
        {"path": "/dev/nvidiactl", "type": "c", "major": 195, "minor": 255},
        {"path": "/dev/nvidia-uvm"},
        {"path": "/dev/nvidia-uvm-tools"},
    ]
    return {"cdiVersion": "0.5.0", "kind": kind, "devices": devices, "containerEdits": {"deviceNodes": shared}}


def check_spec(got: object, want: dict, call: str) -> None:
    assert isinstance(got, dict), f"{call} returned {type(got).__name__}, expected a dict"
    for key in ("cdiVersion", "kind", "containerEdits"):
        assert got.get(key) == want[key], f"{call}[{key!r}] = {got.get(key)!r}, expected {want[key]!r}"
    names = [d.get("name") for d in got.get("devices", [])]
    assert names == [d["name"] for d in want["devices"]], (
        f"{call}: device names {names}, expected {[d['name'] for d in want['devices']]} "
        f"(per GPU its index then its UUID, then 'all')"
    )
    for g, w in zip(got["devices"], want["devices"], strict=True):
        assert g == w, f"{call}: device {w['name']!r} = {g}, expected {w}"
    assert got == want, f"{call} = {got}, expected exactly {want}"
    json.dumps(got)  # a spec is written as JSON/YAML: plain dicts, lists, str and int only


@grade(
    cdi_spec,
    "correctness",
    points=3,
    hint="Is the device name the GPU's index or its /dev/nvidia minor? Which nodes does every container need?",
)
def test_cdi_worked_example():
    check_spec(cdi_spec([U0, U1], [0, 3]), spec([U0, U1], [0, 3]), f"cdi_spec([{U0!r}, {U1!r}], [0, 3])")
    check_spec(
        cdi_spec((U1,), (7,), kind="example.com/gpu"),
        spec([U1], [7], "example.com/gpu"),
        f"cdi_spec(({U1!r},), (7,), kind='example.com/gpu')",
    )


UUIDS = st.uuids().map(lambda u: "GPU-" + str(u))


@grade(
    cdi_spec,
    "correctness",
    points=2,
    hint="Does 'all' hold exactly the GPUs' own nodes, each once, all char devices of major 195?",
)
@settings(max_examples=30)
@given(data=st.data(), n=st.integers(1, 8))
def test_cdi_structure(data, n):
    uuids = data.draw(st.lists(UUIDS, min_size=n, max_size=n, unique=True), label="uuids")
    minors = data.draw(st.lists(st.integers(0, 253), min_size=n, max_size=n, unique=True), label="minors")
    got = cdi_spec(uuids, minors)
    call = f"cdi_spec({uuids}, {minors})"
    gpu_nodes = [n_ for d in got["devices"] if d["name"] != "all" for n_ in d["containerEdits"]["deviceNodes"]]
    for nd in gpu_nodes:
        assert nd["type"] == "c" and nd["major"] == 195 and nd["path"] == f"/dev/nvidia{nd['minor']}", (
            f"{call}: device node {nd} is not the char device 195:<minor> at /dev/nvidia<minor>"
        )
    all_nodes = next(d for d in got["devices"] if d["name"] == "all")["containerEdits"]["deviceNodes"]
    assert sorted(nd["minor"] for nd in all_nodes) == sorted(minors), (
        f"{call}: 'all' holds minors {[nd['minor'] for nd in all_nodes]}, expected every GPU's: {minors}"
    )
    check_spec(got, spec(uuids, minors), call)


@grade(
    cdi_spec,
    "correctness",
    points=1,
    validation=True,
    hint="Which UUIDs, minors and kinds could a container runtime not turn into a device node?",
)
def test_cdi_rejects_bad_input():
    assert_rejects_all(
        cdi_spec,
        [
            (([], []), "uuids"),
            ((U0, [0]), "uuids"),
            ((None, [0]), "uuids"),
            (([U0, U1], [0]), "minors"),
            (([U0], 0), "minors"),
            (([U0], [-1]), "minors[0]"),
            (([U0], [1.0]), "minors[0]"),
            (([U0], [True]), "minors[0]"),
            (([U0, U1], [0, 255]), "minors[1]"),
            (([U0, U1], [0, 254]), "minors[1]"),
            (([U0, U1], [3, 3]), "minors[1]"),
            ((["GPU-123", U1], [0, 1]), "uuids[0]"),
            (([U0[4:]], [0]), "uuids[0]"),
            ((["MIG-" + U0[4:]], [0]), "uuids[0]"),
            (([U0, U0], [0, 1]), "uuids[1]"),
            (([U0, 7], [0, 1]), "uuids[1]"),
            (([U0], [0], "gpu"), "kind"),
            (([U0], [0], ""), "kind"),
            (([U0], [0], None), "kind"),
        ],
    )
