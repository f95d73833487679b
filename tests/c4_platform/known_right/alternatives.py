"""Correct alternatives: best fit from a heap of holes, divmod per node, a daemon on Decimal times, Decimal sizing."""

import heapq
from decimal import ROUND_CEILING, Decimal

MODULE = "platform"
ACCEPTED = ["place_gang", "frag_metrics", "self_heal", "rfc_sizing"]


def place_gang(free_per_node, n_gpus, tp):
    free = _check_free(free_per_node)
    check_int("n_gpus", n_gpus, 1)
    check_int("tp", tp, 1)
    if n_gpus % tp:
        raise ValueError(f"n_gpus = {n_gpus} is not a multiple of tp = {tp}")
    need = n_gpus // tp
    if sum(f // tp for f in free) < need:
        return None
    holes = [(f, i) for i, f in enumerate(free) if f >= tp]
    heapq.heapify(holes)
    taken = {}
    for _ in range(need):
        f, i = heapq.heappop(holes)
        taken[i] = taken.get(i, 0) + tp
        if f - tp >= tp:
            heapq.heappush(holes, (f - tp, i))
    return sorted(taken.items())


def frag_metrics(free_per_node, gpus_per_node, tp=8):
    check_int("gpus_per_node", gpus_per_node, 1)
    check_int("tp", tp, 1)
    if tp > gpus_per_node:
        raise ValueError("tp must fit in a node")
    free = _check_free(free_per_node, gpus_per_node)
    groups = stranded = 0
    for f in free:
        q, r = divmod(f, tp)
        groups, stranded = groups + q, stranded + r
    idle, total = sum(free), len(free) * gpus_per_node
    return {
        "total": total,
        "busy": total - idle,
        "idle": idle,
        "frag_ratio": 1 - (total - idle) / total,
        "stranded_gpus": stranded,
        "stranded_fraction": 0.0 if idle == 0 else stranded / idle,
        "placeable_groups": groups,
        "nodes": len(free),
    }


def self_heal(events, n_spares, poll_s=POLL_S, swap_s=SWAP_S, restart_s=RESTART_S):
    evs = _check_events(events)
    check_int("n_spares", n_spares)
    _check_real("poll_s", poll_s, positive=True)
    _check_real("swap_s", swap_s)
    _check_real("restart_s", restart_s)
    poll = Decimal(str(poll_s))
    out, tainted, left, spans = [], [], n_spares, []
    for t, node, xid in evs:
        detect = (Decimal(str(t)) / poll).to_integral_value(rounding=ROUND_CEILING) * poll
        rec, act = None, "watch"
        if node in tainted:
            act = "already_tainted"
        elif xid in REPLACE_XIDS:
            tainted.append(node)
            act = "replace" if left else "suspend"
            if left:
                left -= 1
                rec = float(detect) + swap_s + restart_s
        elif xid in RESTART_XIDS:
            act, rec = "restart", float(detect) + restart_s
        if rec is not None:
            spans.append(rec - t)
        out.append({"node": node, "xid": xid, "action": act, "detected_s": float(detect), "recovered_s": rec})
    mttr = sum(spans) / len(spans) if spans else None
    return {"incidents": out, "mttr_s": mttr, "tainted": sorted(tainted), "spares_left": left}


def rfc_sizing(n_gpus, gpus_per_node, nics_per_node, nic_gbit_s, spare_fraction, gpu_mtbf_cluster_h):
    for name, v in (
        ("n_gpus", n_gpus),
        ("gpus_per_node", gpus_per_node),
        ("nics_per_node", nics_per_node),
        ("nic_gbit_s", nic_gbit_s),
    ):
        check_int(name, v, 1)
    _check_real("spare_fraction", spare_fraction, below_one=True)
    _check_real("gpu_mtbf_cluster_h", gpu_mtbf_cluster_h, positive=True)
    spare = int((Decimal(str(spare_fraction)) * n_gpus).to_integral_value(rounding=ROUND_CEILING))
    return {
        "nodes": (n_gpus + gpus_per_node - 1) // gpus_per_node,
        "injection_bytes_s": nics_per_node * nic_gbit_s * 125_000_000,
        "spare_gpus": spare,
        "spare_nodes": (spare + gpus_per_node - 1) // gpus_per_node,
        "failures_per_day": 24 / gpu_mtbf_cluster_h,
    }
