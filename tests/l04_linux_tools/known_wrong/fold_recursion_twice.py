"""Classic bug: a recursive function is added to its inclusive count once per frame (recurse 8, not 4)."""

MODULE = "linux_tools"
REJECTED_BY = {"fold_stacks": ["correctness"]}


def fold_stacks(lines):
    out = {}
    for line in _check_lines("lines", lines):
        if not isinstance(line, str):
            raise ValueError("lines must hold str lines")
        parts = line.strip().rsplit(None, 1)
        if len(parts) != 2 or not _COUNT.match(parts[1]) or not all(parts[0].split(";")):
            continue
        frames, count = parts[0].split(";"), int(parts[1])
        for name in frames:
            out.setdefault(name, {"self": 0, "inclusive": 0})["inclusive"] += count
        out[frames[-1]]["self"] += count
    return out
