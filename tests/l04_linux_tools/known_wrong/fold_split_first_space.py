"""Bug: splits each line at its first space, so frames with spaces (C++ signatures) lose the line."""

MODULE = "linux_tools"
REJECTED_BY = {"fold_stacks": ["correctness"]}


def fold_stacks(lines):
    out = {}
    for line in _check_lines("lines", lines):
        if not isinstance(line, str):
            raise ValueError("lines must hold str lines")
        stack, _, count = line.strip().partition(" ")
        if not _COUNT.match(count) or not stack:
            continue
        frames = stack.split(";")
        for name in dict.fromkeys(frames):
            out.setdefault(name, {"self": 0, "inclusive": 0})["inclusive"] += int(count)
        out[frames[-1]]["self"] += int(count)
    return out
