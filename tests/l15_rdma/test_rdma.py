"""L15 · memory-bus bytes per path (TCP, host-staged RDMA, GPUDirect RDMA), the verbs rules, GDR readiness."""

from __future__ import annotations

from collections import deque
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from grader.kit import assert_parts, assert_rejects, assert_rejects_all, grade, learner

UNIT = "l15_rdma"
memory_bus_bytes = learner(UNIT, "rdma", "memory_bus_bytes")
simulate_verbs = learner(UNIT, "rdma", "simulate_verbs")
gdr_readiness = learner(UNIT, "rdma", "gdr_readiness")

FIXTURES = Path(__file__).parent / "fixtures"


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text()


# ---- memory_bus_bytes ------------------------------------------------------------------------------

KEYS = ("host_dram_bytes", "pcie_bytes", "cpu_copy_bytes", "host_copies")
# multiples of P for (DRAM, PCIe, CPU copy) and the host copies, per path
PATH_TABLE = {"tcp": (4, 2, 1, 2), "rdma_host": (2, 2, 0, 1), "gdr": (0, 1, 0, 0)}


def assert_named_parts(got: object, want: dict, what: str) -> None:
    """assert_parts on the keys the contract names: an extra key in the learner's dict is not a mistake."""
    assert_parts({k: got[k] for k in want if k in got} if isinstance(got, dict) else got, want, what)


def want_bus(p: int, path: str) -> dict[str, int]:
    dram, pcie, cpu, copies = PATH_TABLE[path]
    return {"host_dram_bytes": dram * p, "pcie_bytes": pcie * p, "cpu_copy_bytes": cpu * p, "host_copies": copies}


@grade(memory_bus_bytes, "correctness", points=2,
       hint="A DMA touches DRAM once; a CPU memcpy reads and writes it. How many of each does each path make?")
def test_memory_bus_worked_examples():
    """1 GB: TCP 4/2/1 GB and 2 host copies (200 GB/s of DRAM traffic at 50 GB/s), host RDMA 2/2/0/1, GDR 0/1/0/0."""
    gb = 1_000_000_000
    assert_named_parts(memory_bus_bytes(gb, "tcp"),
                       {"host_dram_bytes": 4 * gb, "pcie_bytes": 2 * gb, "cpu_copy_bytes": gb, "host_copies": 2},
                       "memory_bus_bytes(10**9, 'tcp') (D2H DMA + send() memcpy + NIC DMA)")
    assert_named_parts(memory_bus_bytes(gb, "rdma_host"),
                       {"host_dram_bytes": 2 * gb, "pcie_bytes": 2 * gb, "cpu_copy_bytes": 0, "host_copies": 1},
                       "memory_bus_bytes(10**9, 'rdma_host') (D2H into a pinned MR, then the NIC reads it)")
    assert_named_parts(memory_bus_bytes(gb, "gdr"),
                       {"host_dram_bytes": 0, "pcie_bytes": gb, "cpu_copy_bytes": 0, "host_copies": 0},
                       "memory_bus_bytes(10**9, 'gdr') (the NIC reads GPU memory over PCIe peer-to-peer)")
    assert_named_parts(memory_bus_bytes(0, "tcp"), {k: 0 for k in KEYS} | {"host_copies": 2},
                       "memory_bus_bytes(0, 'tcp') (the path still makes its copies)")


@grade(memory_bus_bytes, "correctness", points=1,
       hint="Which path touches host memory the most, and which not at all?")
@settings(max_examples=40)
@given(p=st.integers(0, 2**44), path=st.sampled_from(sorted(PATH_TABLE)))
def test_memory_bus_any_size(p, path):
    """Every size and path: the table's multiples of P exactly; host DRAM tcp > rdma_host > gdr when P > 0."""
    assert_named_parts(memory_bus_bytes(p, path), want_bus(p, path), f"memory_bus_bytes({p}, {path!r})")
    if p > 0:
        dram = [memory_bus_bytes(p, x)["host_dram_bytes"] for x in ("tcp", "rdma_host", "gdr")]
        assert dram[0] > dram[1] > dram[2], f"host_dram_bytes for tcp, rdma_host, gdr at P = {p}: {dram}"


@grade(memory_bus_bytes, "correctness", points=1, validation=True,
       hint="Raise ValueError naming the argument: a byte count is an exact int, a path one of three names.")
def test_memory_bus_rejects_bad_arguments():
    assert_rejects_all(memory_bus_bytes, [
        ((-1, "tcp"), "payload_bytes"), ((1.5e9, "tcp"), "payload_bytes"), ((True, "gdr"), "payload_bytes"),
        ((10, "udp"), "path"), ((10, "GDR"), "path"), ((10, None), "path"),
    ])


# ---- simulate_verbs: the reference model ----------------------------------------------------------

LEGAL = {("RESET", "RESET"), ("RESET", "INIT"), ("INIT", "RESET"), ("INIT", "INIT"), ("INIT", "RTR"),
         ("RTR", "RESET"), ("RTR", "RTS"), ("RTS", "RESET"), ("RTS", "RTS")}


def reference_verbs(ops):
    """The rules of the README, written as a table of per-side records."""
    qp = {s: {"state": "RTS", "mrs": {}, "rq": deque()} for s in "AB"}
    out = []
    for op in ops:
        kind, me = op[0], qp[op[1]]
        other = qp["B" if op[1] == "A" else "A"]
        if kind == "reg_mr":
            me["mrs"][op[2]] = op[3]
            res = ("SUCCESS", [])
        elif kind == "modify_qp":
            ok = (me["state"], op[2]) in LEGAL
            if ok:
                me["state"] = op[2]
                if op[2] == "RESET":
                    me["rq"] = deque()
            res = ("SUCCESS" if ok else "INVALID_STATE", [])
        elif kind == "post_recv":
            ok = me["state"] in ("INIT", "RTR", "RTS")
            if ok:
                me["rq"].append(op[2])
            res = ("SUCCESS" if ok else "INVALID_STATE", [])
        elif me["state"] != "RTS":
            res = ("INVALID_STATE", [])
        elif other["state"] not in ("RTR", "RTS"):
            res = ("RETRY_EXC_ERR", [op[1]])
        elif kind != "send" and (op[2] not in other["mrs"] or op[3] + op[4] > other["mrs"][op[2]]):
            res = ("REM_ACCESS_ERR", [op[1]])
        elif kind == "write":
            res = ("SUCCESS", [op[1]])
        elif not other["rq"]:
            res = ("RNR", [])
        else:
            room = other["rq"].popleft()
            res = ("LOC_LEN_ERR" if kind == "send" and op[2] > room else "SUCCESS", ["A", "B"])
        out.append({"op": kind, "status": res[0], "cqe": res[1]})
    return out


def named_result(g: object) -> object:
    """The three keys the contract names: an extra key in the learner's result is not a mistake."""
    return {k: g.get(k) for k in ("op", "status", "cqe")} if isinstance(g, dict) else g


def check_verbs(ops, want, what="simulate_verbs(ops)"):
    got = simulate_verbs(ops)
    assert isinstance(got, list | tuple) and len(got) == len(ops), (
        f"{what} returned {got!r}: expected a list with one result per op ({len(ops)})")
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        shown = named_result(g)
        assert shown == w, (f"{what}[{i}] for op {ops[i]!r} = {shown!r}, expected {w!r}\n"
                            f"ops so far: {ops[: i + 1]!r}")


def r(op, status, cqe=()):
    return {"op": op, "status": status, "cqe": list(cqe)}


WORKED_OPS = [
    ("reg_mr", "B", "kv", 4096),
    ("write", "A", "kv", 0, 4096),
    ("write", "A", "kv", 4000, 200),
    ("write", "A", "nokey", 0, 8),
    ("send", "A", 64),
    ("post_recv", "B", 32),
    ("send", "A", 64),
    ("post_recv", "B", 128),
    ("send", "A", 64),
    ("write_imm", "A", "kv", 0, 16),
    ("post_recv", "B", 0),
    ("write_imm", "A", "kv", 0, 16),
]
WORKED_RESULTS = [
    r("reg_mr", "SUCCESS"), r("write", "SUCCESS", "A"), r("write", "REM_ACCESS_ERR", "A"),
    r("write", "REM_ACCESS_ERR", "A"), r("send", "RNR"), r("post_recv", "SUCCESS"),
    r("send", "LOC_LEN_ERR", "AB"), r("post_recv", "SUCCESS"), r("send", "SUCCESS", "AB"),
    r("write_imm", "RNR"), r("post_recv", "SUCCESS"), r("write_imm", "SUCCESS", "AB"),
]


@grade(simulate_verbs, "correctness", points=3,
       hint="Which operations need a RECV the peer posted beforehand, and which ones does the peer's CPU never see?")
def test_verbs_worked_sequence():
    """A WRITE up to the region's end, past it, with an unknown rkey; SENDs without, too short, right; WRITE_IMM."""
    check_verbs(WORKED_OPS, WORKED_RESULTS)


QP_OPS = [
    ("modify_qp", "B", "RESET"), ("post_recv", "B", 64), ("send", "A", 8),
    ("modify_qp", "B", "RTR"), ("modify_qp", "B", "INIT"), ("post_recv", "B", 64), ("send", "A", 8),
    ("modify_qp", "B", "RTR"), ("send", "A", 8), ("send", "B", 8), ("modify_qp", "B", "RTS"),
    ("post_recv", "A", 16), ("send", "B", 8), ("modify_qp", "A", "INIT"),
]
QP_RESULTS = [
    r("modify_qp", "SUCCESS"), r("post_recv", "INVALID_STATE"), r("send", "RETRY_EXC_ERR", "A"),
    r("modify_qp", "INVALID_STATE"), r("modify_qp", "SUCCESS"), r("post_recv", "SUCCESS"),
    r("send", "RETRY_EXC_ERR", "A"), r("modify_qp", "SUCCESS"), r("send", "SUCCESS", "AB"),
    r("send", "INVALID_STATE"), r("modify_qp", "SUCCESS"), r("post_recv", "SUCCESS"), r("send", "SUCCESS", "AB"),
    r("modify_qp", "INVALID_STATE"),
]


@grade(simulate_verbs, "correctness", points=2,
       hint="In which QP states may a side post a RECV, receive a packet, post a SEND? Which moves may it make?")
def test_verbs_qp_states():
    """RESET → INIT → RTR → RTS: a RECV needs INIT, receiving RTR, sending RTS; RESET → RTR and RTS → INIT refused."""
    check_verbs(QP_OPS, QP_RESULTS)
    reset = [("post_recv", "B", 64), ("modify_qp", "B", "RESET"), ("modify_qp", "B", "INIT"),
             ("modify_qp", "B", "RTR"), ("send", "A", 8)]
    check_verbs(reset, [r("post_recv", "SUCCESS"), r("modify_qp", "SUCCESS"), r("modify_qp", "SUCCESS"),
                        r("modify_qp", "SUCCESS"), r("send", "RNR")],
                "simulate_verbs(a RECV posted, then the QP reset: its receive queue is emptied)")


@grade(simulate_verbs, "correctness", points=1,
       hint="A WRITE lands in the peer's region: what must the peer have done, and where may the bytes go?")
def test_verbs_region_bounds():
    """offset + n == size fits, one byte more does not; rkeys are per side; int rkeys work; n = 0 at the end fits."""
    ops = [("reg_mr", "B", 7, 100), ("reg_mr", "A", "kv", 4096), ("write", "A", 7, 99, 1), ("write", "A", 7, 99, 2),
           ("write", "A", 7, 100, 0), ("write", "A", "kv", 0, 8), ("write", "B", "kv", 0, 8),
           ("write", "A", 7, 101, 0), ("write_imm", "B", 7, 0, 1)]
    check_verbs(ops, [r("reg_mr", "SUCCESS"), r("reg_mr", "SUCCESS"), r("write", "SUCCESS", "A"),
                      r("write", "REM_ACCESS_ERR", "A"), r("write", "SUCCESS", "A"), r("write", "REM_ACCESS_ERR", "A"),
                      r("write", "SUCCESS", "B"), r("write", "REM_ACCESS_ERR", "A"),
                      r("write_imm", "REM_ACCESS_ERR", "B")],
                "simulate_verbs(region bounds; B's region 7 is not A's, A's 'kv' is not B's)")


def _ops_strategy():
    side = st.sampled_from("AB")
    rkey = st.sampled_from(["kv", "w", 3])
    size = st.integers(0, 48)
    op = st.one_of(
        st.tuples(st.just("reg_mr"), side, rkey, size),
        st.tuples(st.just("post_recv"), side, size),
        st.tuples(st.just("post_recv"), side, size),
        st.tuples(st.just("send"), side, size),
        st.tuples(st.just("send"), side, size),
        st.tuples(st.just("write"), side, rkey, size, size),
        st.tuples(st.just("write_imm"), side, rkey, size, size),
        st.tuples(st.just("modify_qp"), side, st.sampled_from(["RESET", "INIT", "RTR", "RTS"])),
    )

    def dedupe(ops):
        seen, out = set(), []
        for o in ops:
            if o[0] == "reg_mr":
                if (o[1], o[2]) in seen:
                    continue
                seen.add((o[1], o[2]))
            out.append(o)
        return out

    return st.lists(op, max_size=40).map(dedupe)


@grade(simulate_verbs, "correctness", points=3,
       hint="Keep per side: the QP state, the regions by rkey, and the RECVs in the order they were posted.")
@settings(max_examples=60)
@given(ops=_ops_strategy())
def test_verbs_random_sequences(ops):
    """Random sequences against the reference model; RECVs consumed never exceed RECVs posted; WRITE never
    completes at the target."""
    want = reference_verbs(ops)
    check_verbs(ops, want, f"simulate_verbs({ops!r})")
    got = simulate_verbs(ops)
    for side in "AB":
        posted = sum(1 for o, g in zip(ops, got, strict=True)
                     if o[0] == "post_recv" and o[1] == side and g["status"] == "SUCCESS")
        consumed = sum(1 for o, g in zip(ops, got, strict=True) if o[0] in ("send", "write_imm") and o[1] != side
                       and g["status"] in ("SUCCESS", "LOC_LEN_ERR"))
        assert consumed <= posted, f"side {side}: {consumed} RECVs consumed, only {posted} posted"
    for o, g in zip(ops, got, strict=True):
        if o[0] == "write":
            assert g["cqe"] in ([], [o[1]]), f"a WRITE completed at the target: {o!r} → {g!r}"


@grade(simulate_verbs, "correctness", points=1, validation=True,
       hint="Raise ValueError naming ops[i] for a malformed op: unknown name, wrong arity, bad side, float size.")
def test_verbs_rejects_bad_ops():
    ok = ("post_recv", "B", 8)
    assert_rejects(simulate_verbs, (None,), "ops")
    assert_rejects(simulate_verbs, ("send A 8",), "ops")
    for bad in [("read", "A", "kv", 0, 8), ("send", "C", 8), ("send", "A"), ("send", "A", 8, 0), ("send", "A", 8.0),
                ("send", "A", -1), ("send", "A", True), ("write", "A", "kv", -1, 8), ("write", "A", 1.5, 0, 8),
                ("reg_mr", "B", "kv", 4096.0), ("modify_qp", "A", "SQD"), ("post_recv", "B"), "send", (),
                (["send"], "A", 8), ("send", ["A"], 8), ("modify_qp", "A", ["RTS"])]:
        assert_rejects(simulate_verbs, ([ok, bad],), "ops[1]")
    assert_rejects(simulate_verbs, ([("reg_mr", "B", "kv", 64), ok, ("reg_mr", "B", "kv", 128)],), "ops[2]")


# ---- gdr_readiness: fixtures ----------------------------------------------------------------------

HEALTHY = ("lsmod_healthy.txt", "ibv_devinfo_dgx.txt", "nccl_healthy.log")


def readiness(lsmod, devinfo, log):
    return gdr_readiness(fixture(lsmod), fixture(devinfo), fixture(log))


def check_ready(files, reasons):
    got = readiness(*files)
    want = {"ready": not reasons, "reasons": reasons}
    shown = {k: got.get(k) for k in want} if isinstance(got, dict) else got
    assert shown == want, f"gdr_readiness{files} = {got!r}, expected {want!r}"


@grade(gdr_readiness, "correctness", points=3,
       hint="A silent fallback leaves every port active: which capture shows the missing module, which NCCL's choice?")
def test_gdr_worked_fixtures():
    """The healthy DGX; the node after the kernel upgrade (no nvidia_peermem row, NCCL 'Disabled ... (no module)');
    the lecture's own two log lines; a port down."""
    check_ready(HEALTHY, [])
    check_ready(("lsmod_after_upgrade.txt", "ibv_devinfo_dgx.txt", "nccl_no_peermem.log"),
                ["peermem_not_loaded", "nccl_gdr_disabled"])
    check_ready(("lsmod_after_upgrade.txt", "ibv_devinfo_dgx.txt", "nccl_course.log"),
                ["peermem_not_loaded", "nccl_gdr_disabled"])
    check_ready(("lsmod_healthy.txt", "ibv_devinfo_port_down.txt", "nccl_healthy.log"), ["no_active_port"])
    check_ready(("lsmod_after_upgrade.txt", "ibv_devinfo_no_devices.txt", "nccl_socket.log"),
                ["peermem_not_loaded", "no_active_port", "nccl_gdr_disabled"])


@grade(gdr_readiness, "correctness", points=2,
       hint="Is a module loaded when its name appears anywhere in lsmod, or when it has a row of its own?")
def test_gdr_lsmod_rows():
    """Only the first column names a loaded module: nv_peer_mem counts, 'Used by' entries do not."""
    check_ready(("lsmod_nv_peer_mem.txt", "ibv_devinfo_dgx.txt", "nccl_healthy.log"), [])
    # made by hand from lsmod_healthy.txt: the nvidia_peermem row removed, the Used-by columns left as printed
    check_ready(("lsmod_usedby_only.txt", "ibv_devinfo_dgx.txt", "nccl_healthy.log"), ["peermem_not_loaded"])


@grade(gdr_readiness, "correctness", points=2,
       hint="Which line of ibv_devinfo is the port's logical state, and which is only the physical link?")
def test_gdr_port_states():
    """Several HCAs with one active port is ready; PORT_INIT with phys_state LINK_UP (no subnet manager) is not."""
    check_ready(("lsmod_healthy.txt", "ibv_devinfo_one_active.txt", "nccl_healthy.log"), [])
    check_ready(("lsmod_healthy.txt", "ibv_devinfo_no_sm.txt", "nccl_healthy.log"), ["no_active_port"])


@grade(gdr_readiness, "correctness", points=2,
       hint="NCCL prints 'disable' in several harmless lines: which sentence says GPUDirect RDMA is off?")
def test_gdr_nccl_lines():
    """NCCL_IB_DISABLE / NCCL_P2P_DISABLE echoes and 'GPU Direct RDMA (DMABUF) enabled' are not a disabled GDR;
    the Socket transport's 'GPU Direct RDMA Disabled for HCA 0 'eth0'' is."""
    check_ready(("lsmod_healthy.txt", "ibv_devinfo_dgx.txt", "nccl_env_noise.log"), [])
    check_ready(("lsmod_healthy.txt", "ibv_devinfo_dgx.txt", "nccl_socket.log"), ["nccl_gdr_disabled"])


# ---- gdr_readiness: generated captures in the tools' formats ---------------------------------------

MODULES = [("nvidia_uvm", 4911104, 4, ""), ("nvidia_drm", 122880, 0, ""), ("nvidia_modeset", 1310720, 1, "nvidia_drm"),
           ("nvidia", 56807424, 74, "nvidia_uvm,nvidia_peermem,nvidia_modeset"), ("rdma_cm", 122880, 1, "rdma_ucm"),
           ("ib_core", 434176, 9, "rdma_cm,nvidia_peermem,ib_uverbs,mlx5_ib"), ("mlx5_ib", 454656, 0, ""),
           ("ib_uverbs", 163840, 17, "rdma_ucm,mlx5_ib"), ("mlx5_core", 2359296, 1, "mlx5_ib"),
           ("nvidia_fs", 262144, 0, ""), ("nvme_fabrics", 32768, 1, "nvme_rdma"), ("x_tables", 65536, 8, ""),
           ("nvme_core", 200704, 5, "nvme,nvme_fabrics"), ("ipmi_msghandler", 122880, 2, "ipmi_devintf,ipmi_si")]


def lsmod_text(rows, trailing):
    """kmod's lsmod: "%-19s %8lu  %d" and the holders joined by ','; `trailing`: spaces a terminal copy adds."""
    lines = ["Module                  Size  Used by"]
    for name, size, count, holders in rows:
        lines.append(f"{name:<19} {size:>8}  {count}" + (" " + holders if holders else ""))
    return "\n".join(line + " " * trailing for line in lines) + "\n"


PORT_STATES = [("PORT_NOP", 0), ("PORT_DOWN", 1), ("PORT_INIT", 2), ("PORT_ARMED", 3), ("PORT_ACTIVE", 4),
               ("PORT_ACTIVE_DEFER", 5)]


def hca_text(i, states, verbose):
    """One HCA block as rdma-core's ibv_devinfo prints it (tabs), optionally with -v's extra fields."""
    lines = [f"hca_id:\tmlx5_{i}", "\ttransport:\t\t\tInfiniBand (0)", "\tfw_ver:\t\t\t\t28.39.1002",
             f"\tnode_guid:\t\t\t946d:ae03:00f8:{i:04x}", f"\tsys_image_guid:\t\t\t946d:ae03:00f8:{i:04x}",
             "\tvendor_id:\t\t\t0x02c9", "\tvendor_part_id:\t\t\t4129", "\thw_ver:\t\t\t\t0x0",
             "\tboard_id:\t\t\tMT_0000000838", f"\tphys_port_cnt:\t\t\t{len(states)}"]
    for port, (state, code) in enumerate(states, start=1):
        lines += [f"\t\tport:\t{port}", f"\t\t\tstate:\t\t\t{state} ({code})", "\t\t\tmax_mtu:\t\t4096 (5)",
                  "\t\t\tactive_mtu:\t\t4096 (5)", "\t\t\tsm_lid:\t\t\t1", "\t\t\tport_lid:\t\t7",
                  "\t\t\tport_lmc:\t\t0x00", "\t\t\tlink_layer:\t\tInfiniBand"]
        if verbose:
            lines += ["\t\t\tmax_msg_sz:\t\t0x40000000", "\t\t\tactive_width:\t\t4X (2)",
                      "\t\t\tactive_speed:\t\t100.0 Gbps (128)",
                      f"\t\t\tphys_state:\t\t{'LINK_UP (5)' if code >= 2 else 'POLLING (2)'}"]
    return "\n".join(lines) + "\n"


def nccl_line(host, pid, dev, text):
    return f"{host}:{pid}:{pid + 57} [{dev}] NCCL INFO {text}"


NCCL_OK = ["Using network IB", "NCCL_IB_DISABLE set by environment to 0.", "NCCL_P2P_DISABLE set by environment to 0.",
           "NET/IB : GPU Direct RDMA (DMABUF) enabled for HCA 0 'mlx5_0'", "Channel 00/0 : 0[0] -> 8[0] [send] via "
           "NET/IB/0/GDRDMA", "Connected all rings", "NVLS multicast support is not available on dev 0",
           "P2P Chunksize set to 131072", "NCCL_NET_GDR_LEVEL set by environment to PHB"]
FOREIGN = ["NCCL version 2.20.5+cuda12.4", "step 10 | loss 7.8121 | 412.6 ms/step",
           "UserWarning: No device id is provided via `init_process_group` or `barrier `."]


@st.composite
def captures(draw):
    peermem = draw(st.sampled_from([None, "nvidia_peermem", "nv_peer_mem"]))
    rows = draw(st.lists(st.sampled_from(MODULES), min_size=1, max_size=8, unique=True))
    if peermem:
        rows.append((peermem, 16384, 0, ""))
    rows = draw(st.permutations(rows))
    lsmod = lsmod_text(rows, draw(st.integers(0, 2)))
    hcas = draw(st.lists(st.lists(st.sampled_from(PORT_STATES), min_size=1, max_size=2), min_size=1, max_size=5))
    verbose = draw(st.booleans())
    blocks = [hca_text(i, states, verbose) for i, states in enumerate(hcas)]
    devinfo = "\n".join(draw(st.permutations(blocks)))
    host, pid, dev = draw(st.sampled_from(["gpu-node-01", "h100-b7"])), draw(st.integers(100, 99999)), draw(
        st.integers(0, 7))
    log = [nccl_line(host, pid, dev, t) for t in draw(st.lists(st.sampled_from(NCCL_OK), min_size=1, max_size=6))]
    log += draw(st.lists(st.sampled_from(FOREIGN), max_size=2))
    disabled = draw(st.lists(st.integers(0, 7), max_size=2))
    spelling = draw(st.sampled_from(["NET/IB : GPU Direct RDMA Disabled for HCA {i} 'mlx5_{i}' (no module)",
                                     "NET/IB : GPU Direct RDMA Disabled for HCA {i} 'mlx5_{i}'"]))
    log += [nccl_line(host, pid, dev, spelling.format(i=i)) for i in disabled]
    log = "\n".join(draw(st.permutations(log))) + "\n"
    reasons = []
    if not peermem:
        reasons.append("peermem_not_loaded")
    if not any(code == 4 for states in hcas for _, code in states):
        reasons.append("no_active_port")
    if disabled:
        reasons.append("nccl_gdr_disabled")
    return lsmod, devinfo, log, reasons


@grade(gdr_readiness, "correctness", points=3,
       hint="Module rows come in any order and any column width; HCA blocks in any order; log lines interleave.")
@settings(max_examples=40)
@given(case=captures())
def test_gdr_generated_captures(case):
    """lsmod rows permuted (kmod's column widths, trailing blanks); HCA blocks with 1-2 ports in any of the six
    states, -v or not, permuted; NCCL lines from several threads interleaved with other output."""
    lsmod, devinfo, log, reasons = case
    got = gdr_readiness(lsmod, devinfo, log)
    want = {"ready": not reasons, "reasons": reasons}
    shown = {k: got.get(k) for k in want} if isinstance(got, dict) else got
    assert shown == want, (f"gdr_readiness(...) = {got!r}, expected {want!r}\n--- lsmod ---\n{lsmod}"
                           f"--- ibv_devinfo ---\n{devinfo}--- nccl_log ---\n{log}")


@grade(gdr_readiness, "correctness", points=1, validation=True,
       hint="Raise ValueError naming the argument whose text is not a str, or not that tool's output at all.")
def test_gdr_rejects_bad_captures():
    """Non-str captures; lsmod's error or a grep of it (no header); ibstat instead of ibv_devinfo; a cut state line;
    a log without NCCL_DEBUG=INFO."""
    lsmod, devinfo, log = (fixture(f) for f in HEALTHY)
    assert_rejects_all(gdr_readiness, [
        ((None, devinfo, log), "lsmod"), ((lsmod, b"hca_id:", log), "ibv_devinfo"), ((lsmod, devinfo, 0), "nccl_log"),
        ((fixture("lsmod_no_proc.txt"), devinfo, log), "lsmod"),
        ((fixture("lsmod_grep_peermem.txt"), devinfo, log), "lsmod"),
        ((lsmod + "Module                  Size  Used by\n", devinfo, log), "lsmod"),
        ((lsmod, fixture("ibv_devinfo_is_ibstat.txt"), log), "ibv_devinfo"),
        ((lsmod, fixture("ibv_devinfo_truncated.txt"), log), "ibv_devinfo"),
        ((lsmod, "", log), "ibv_devinfo"),
        ((lsmod, devinfo, fixture("nccl_no_debug.log")), "nccl_log"),
        (("", devinfo, log), "lsmod"),
    ])

