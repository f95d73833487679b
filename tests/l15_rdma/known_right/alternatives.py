"""Correct alternatives: the path as a list of steps, a QP object per side, a split-by-whitespace parser."""

MODULE = "rdma"
ACCEPTED = ["memory_bus_bytes", "simulate_verbs", "gdr_readiness"]

# each step: (DRAM bytes per payload byte, PCIe crossings, CPU-copied, lands in host memory)
_STEPS = {
    "d2h_dma": (1, 1, 0, 1),
    "memcpy": (2, 0, 1, 1),
    "nic_read_host": (1, 1, 0, 0),
    "nic_read_gpu": (0, 1, 0, 0),
}
_PATH_STEPS = {"tcp": ("d2h_dma", "memcpy", "nic_read_host"), "rdma_host": ("d2h_dma", "nic_read_host"),
               "gdr": ("nic_read_gpu",)}


def memory_bus_bytes(payload_bytes, path):
    p = check_int("payload_bytes", payload_bytes)
    _check_path(path)
    dram = pcie = cpu = copies = 0
    for step in _PATH_STEPS[path]:
        d, x, c, h = _STEPS[step]
        dram, pcie, cpu, copies = dram + d * p, pcie + x * p, cpu + c * p, copies + h
    return {"host_dram_bytes": dram, "pcie_bytes": pcie, "cpu_copy_bytes": cpu, "host_copies": copies}


class _QP:
    def __init__(self):
        self.state, self.regions, self.recvs = "RTS", {}, []

    def can_receive(self):
        return self.state in ("RTR", "RTS")

    def fits(self, rkey, offset, n):
        return rkey in self.regions and offset + n <= self.regions[rkey]


def simulate_verbs(ops):
    ops = _check_ops(ops)
    qps = {"A": _QP(), "B": _QP()}
    order = {"RESET": 0, "INIT": 1, "RTR": 2, "RTS": 3}
    out = []
    for op in ops:
        me, you = qps[op[1]], qps["B" if op[1] == "A" else "A"]
        name = op[0]
        if name == "reg_mr":
            me.regions[op[2]] = op[3]
            res = ("SUCCESS", [])
        elif name == "modify_qp":
            a, b = order[me.state], order[op[2]]
            if b == 0 or b == a + 1 or (a == b and a in (1, 3)):
                me.state = op[2]
                if b == 0:
                    me.recvs = []
                res = ("SUCCESS", [])
            else:
                res = ("INVALID_STATE", [])
        elif name == "post_recv":
            if me.state == "RESET":
                res = ("INVALID_STATE", [])
            else:
                me.recvs.append(op[2])
                res = ("SUCCESS", [])
        elif me.state != "RTS":
            res = ("INVALID_STATE", [])
        elif not you.can_receive():
            res = ("RETRY_EXC_ERR", [op[1]])
        elif name != "send" and not you.fits(*op[2:]):
            res = ("REM_ACCESS_ERR", [op[1]])
        elif name == "write":
            res = ("SUCCESS", [op[1]])
        elif not you.recvs:
            res = ("RNR", [])
        else:
            room = you.recvs.pop(0)
            res = ("LOC_LEN_ERR" if name == "send" and op[2] > room else "SUCCESS", ["A", "B"])
        out.append({"op": name, "status": res[0], "cqe": res[1]})
    return out


def gdr_readiness(lsmod, ibv_devinfo, nccl_log):
    _check_text("lsmod", lsmod)
    _check_text("ibv_devinfo", ibv_devinfo)
    _check_text("nccl_log", nccl_log)
    rows = [line.split() for line in lsmod.splitlines() if line.split()]
    if not rows or rows[0] != ["Module", "Size", "Used", "by"]:
        raise ValueError("lsmod has no header line")
    names = []
    for fields in rows[1:]:
        if len(fields) not in (3, 4) or not fields[1].isdigit() or not fields[2].lstrip("-").isdigit():
            raise ValueError(f"lsmod row {' '.join(fields)!r} is not 'name size count [holders]'")
        names.append(fields[0])
    states, hca = [], False
    for line in ibv_devinfo.splitlines():
        key, _, value = line.strip().partition(":")
        if key == "hca_id":
            hca = True
        elif key == "state":
            m = re.fullmatch(r"(PORT_[A-Z_]+)\s*\((\d+)\)", value.strip())
            if m is None:
                raise ValueError(f"ibv_devinfo: bad state line {line!r}")
            states.append((m.group(1), int(m.group(2))))
    if not hca and "No IB devices found" not in ibv_devinfo and "Failed to get IB devices list" not in ibv_devinfo:
        raise ValueError("ibv_devinfo: no hca_id line")
    if "NCCL INFO" not in nccl_log:
        raise ValueError("nccl_log: no NCCL INFO line")
    reasons = []
    if "nvidia_peermem" not in names and "nv_peer_mem" not in names:
        reasons.append("peermem_not_loaded")
    if ("PORT_ACTIVE", 4) not in states:
        reasons.append("no_active_port")
    squeezed = [re.sub(r"\s+", "", line).lower() for line in nccl_log.splitlines()]
    if any("gpudirectrdmadisabled" in s or "gpudirectrdmaisdisabled" in s for s in squeezed):
        reasons.append("nccl_gdr_disabled")
    return {"ready": not reasons, "reasons": reasons}
