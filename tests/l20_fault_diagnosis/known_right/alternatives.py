"""Correct alternatives: a hand-rolled Xid tokenizer, severity by rank table, sorted-list medians, per-rank dicts."""

MODULE = "diagnosis"
ACCEPTED = ["parse_xid", "triage_xid", "robust_z", "find_straggler", "nccl_hang_report"]


def parse_xid(dmesg_text):
    _check_text("dmesg_text", dmesg_text)
    out = []
    for line in dmesg_text.splitlines():
        at = line.find("NVRM: Xid (PCI:")
        if at < 0:
            continue
        rest = line[at + len("NVRM: Xid (PCI:"):]
        bus, sep, tail = rest.partition("): ")
        code, comma, fields = tail.partition(",")
        if not sep or not comma or not code.strip().isdigit():
            continue
        try:
            pci = normalize_pci(bus)
        except ValueError:
            continue
        kv = dict(f.strip().split("=", 1) for f in fields.split(",") if "=" in f and f.strip()[:4] in ("pid=", "name"))
        pid = kv.get("pid", "").strip("'")
        name = kv.get("name", "<unknown>")
        out.append({"pci": pci, "xid": int(code), "pid": int(pid) if pid.isdigit() else None,
                    "name": None if name in ("<unknown>", "") else name})
    return out


def triage_xid(dmesg_text, pci_to_gpu):
    _check_text("dmesg_text", dmesg_text)
    buses = _check_pci_map(pci_to_gpu)
    severity = {a: i for i, a in enumerate(ACTIONS)}
    worst, seen = {}, {}
    for e in parse_xid(dmesg_text):
        if e["pci"] not in buses:
            raise ValueError(f"pci_to_gpu lacks {e['pci']}")
        g = buses[e["pci"]]
        a = XID_ACTIONS.get(e["xid"], "investigate")
        if g not in worst or severity[a] > severity[worst[g]]:
            worst[g] = a
        seen.setdefault(g, []).append(e["xid"])
    return {g: {"action": worst[g], "xids": sorted(set(seen[g]))} for g in sorted(worst)}


def _median(xs):
    s = sorted(xs)
    h = len(s) // 2
    return s[h] if len(s) % 2 else (s[h - 1] + s[h]) / 2


def robust_z(values):
    xs = _check_reals("values", values)
    m = _median(xs)
    mad = _median([abs(x - m) for x in xs])
    return [0.6745 * (x - m) / mad if mad else (0.0 if x == m else math.inf * (1 if x > m else -1)) for x in xs]


def find_straggler(compute_ms, wait_ms, threshold=3.5):
    compute = _check_reals("compute_ms", compute_ms, 0.0)
    wait = _check_reals("wait_ms", wait_ms, 0.0)
    if len(wait) != len(compute):
        raise ValueError("wait_ms and compute_ms differ in length")
    threshold = _check_threshold(threshold)
    culprit = compute.index(max(compute))
    z = robust_z(compute)[culprit]
    return {"culprit": culprit, "z": z, "confirmed": bool(z > threshold and wait[culprit] <= min(wait))}


def nccl_hang_report(rank_logs):
    _check_logs(rank_logs)
    per_rank = {r: {} for r in rank_logs}
    for r, text in rank_logs.items():
        for m in map(COLL_LINE.search, text.splitlines()):
            if m:
                comm, op = m.group(3).lower(), int(m.group(2), 16)
                per_rank[r].setdefault(comm, {})[op] = m.group(1)
    comms = sorted({c for ops in per_rank.values() for c in ops})
    report = {}
    for comm in comms:
        top = max(max(ops[comm]) for ops in per_rank.values() if comm in ops)
        names = {r: ops[comm][top] for r, ops in per_rank.items() if comm in ops and top in ops[comm]}
        counts = Counter(names.values())
        best = max(counts.values())
        coll = names[min(r for r, n in names.items() if counts[n] == best)]
        report[comm] = {"last_op": top, "collective": coll,
                        "lagging": sorted(r for r in rank_logs if r not in names),
                        "mismatch": sorted(r for r, n in names.items() if n != coll)}
    return report
