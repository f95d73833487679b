"""Bug (grep -c on ps output): the header line is counted as a task; "STAT" and "S" both start with S."""

MODULE = "linux_tools"
REJECTED_BY = {"ps_states": ["correctness"]}

_correct_ps_states = ps_states


def ps_states(ps_text):
    out = _correct_ps_states(ps_text)
    out["states"]["S"] = out["states"].get("S", 0) + 1
    out["total"] += 1
    return out
