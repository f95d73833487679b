"""Bug: counts the whole STAT string, so "Dl" and "Ss+" become their own states (D 100 instead of 121)."""

MODULE = "linux_tools"
REJECTED_BY = {"ps_states": ["correctness"], "use_triage": ["correctness"]}

_correct_ps_states = ps_states


def ps_states(ps_text):
    text = _check_text("ps_text", ps_text)
    _correct_ps_states(text)  # same checks
    lines = [line for line in text.splitlines() if line.strip()]
    header = lines[0].split()
    col = header.index("STAT") if "STAT" in header else header.index("S")
    wchan = header.index("WCHAN") if "WCHAN" in header else None
    states, d_wchan = {}, {}
    for line in lines[1:]:
        fields = line.split(None, len(header) - 1)
        if fields == header:
            continue
        states[fields[col]] = states.get(fields[col], 0) + 1
        if fields[col] == "D" and wchan is not None:
            d_wchan[fields[wchan]] = d_wchan.get(fields[wchan], 0) + 1
    return {"states": states, "total": sum(states.values()),
            "d_wchan": dict(sorted(d_wchan.items(), key=lambda kv: (-kv[1], kv[0])))}
