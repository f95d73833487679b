"""No argument checks: floats, unknown paths, malformed ops and captures of the wrong tool are not refused."""

MODULE = "rdma"
REJECTED_BY = {"memory_bus_bytes": ["correctness"], "simulate_verbs": ["correctness"],
               "gdr_readiness": ["correctness"]}


def check_int(name, value, minimum=0):
    return value


def _check_path(path):
    return path


def _check_text(name, text):
    return text


def _check_ops(ops):
    return [tuple(op) for op in ops]


LSMOD_HEADER = re.compile(r"")
LSMOD_ROW = re.compile(r"^(\S+)")
PORT_STATE_VALUE = re.compile(r"")
NO_DEVICES = ("",)


def memory_bus_bytes(payload_bytes, path):
    table = {"tcp": (4, 2, 1, 2), "rdma_host": (2, 2, 0, 1)}.get(path, (0, 1, 0, 0))
    keys = ("host_dram_bytes", "pcie_bytes", "cpu_copy_bytes", "host_copies")
    return {k: (m * payload_bytes if k != "host_copies" else m) for k, m in zip(keys, table, strict=True)}
