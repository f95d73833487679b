"""Takes the `[N]` after the pid for the rank: it is the local CUDA device, so ranks 4-7 fold onto 0-3."""

MODULE = "diagnosis"
REJECTED_BY = {"nccl_hang_report": ["correctness"]}

_right_report = nccl_hang_report


def nccl_hang_report(rank_logs):
    _check_logs(rank_logs)
    by_device = {}
    for text in rank_logs.values():
        for line in text.splitlines():
            m = re.search(r"\[(\d+)\] NCCL INFO", line)
            if m:
                by_device.setdefault(int(m.group(1)), []).append(line)
    return _right_report({d: "\n".join(lines) for d, lines in by_device.items()})
