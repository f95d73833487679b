"""Only ranks that logged the communicator are compared: a rank that never reached it is not reported."""

MODULE = "diagnosis"
REJECTED_BY = {"nccl_hang_report": ["correctness"]}

_right_report = nccl_hang_report


def nccl_hang_report(rank_logs):
    report = _right_report(rank_logs)
    for comm, row in report.items():
        present = {r for r, text in rank_logs.items() if comm in text.lower()}
        row["lagging"] = [r for r in row["lagging"] if r in present]
    return report
