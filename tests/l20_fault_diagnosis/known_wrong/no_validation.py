"""No argument checks: right answers on valid input, but bad logs, maps, samples and thresholds not refused."""

MODULE = "diagnosis"
REJECTED_BY = {
    "parse_xid": ["correctness"], "triage_xid": ["correctness"], "parse_dcgm_dmon": ["correctness"],
    "robust_z": ["correctness"], "slow_gpus": ["correctness"], "find_straggler": ["correctness"],
    "nccl_hang_report": ["correctness"],
}


def _check_text(name, text):
    return text


def _check_reals(name, values, minimum=None):
    return [float(v) for v in values]


def _check_threshold(threshold):
    return threshold


def _check_pci_map(pci_to_gpu):
    return {normalize_pci(k): v for k, v in pci_to_gpu.items()}


def _check_logs(rank_logs):
    return rank_logs


def _dmon_value(token, number):
    return None if token == "N/A" else float(token)


def find_straggler(compute_ms, wait_ms, threshold=3.5):
    culprit = max(range(len(compute_ms)), key=lambda r: (compute_ms[r], -r))
    z = robust_z(compute_ms)[culprit]
    return {"culprit": culprit, "z": z, "confirmed": z > threshold and wait_ms[culprit] == min(wait_ms)}


def slow_gpus(dmon, field="SMCLK", threshold=3.5):
    means = {g: statistics.fmean([v for v in fs.get(field, []) if v is not None]) for g, fs in dmon.items()
             if any(v is not None for v in fs.get(field, []))}
    gpus = sorted(means)
    sign = 1 if field in HIGH_IS_BAD else -1
    return [g for g, z in zip(gpus, robust_z([means[g] for g in gpus]), strict=True) if sign * z > threshold]
