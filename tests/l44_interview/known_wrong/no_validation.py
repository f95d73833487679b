"""No argument checks: bad plans, MFU in percent and non-dict dumps come back as values (or crash)."""

MODULE = "interview"
REJECTED_BY = {
    "plan_static_bytes": ["correctness"], "judge_plan": ["correctness"], "training_run": ["correctness"],
    "main_thread_stack": ["correctness"], "triage_hang": ["correctness"],
}


def check_int(name, value, minimum=0):
    return value


def _check_stage(zero_stage):
    return zero_stage


def _check_real(name, value, low, high=float("inf"), *, low_open=True):
    return value


def _check_dump(name, text):
    return text if isinstance(text, str) else str(text)


_correct_main_thread_stack = main_thread_stack
_correct_triage_hang = triage_hang


def main_thread_stack(dump):
    try:
        return _correct_main_thread_stack(dump)
    except ValueError:
        return []


def triage_hang(dumps):
    return _correct_triage_hang(dict(dumps) if isinstance(dumps, dict) and dumps else {0: ""})
