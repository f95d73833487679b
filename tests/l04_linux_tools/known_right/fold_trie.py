"""Another correct fold: build the call tree (a trie of frames), then walk it, adding a node's samples to a
function's inclusive count only when that function is not already on the path above it."""

MODULE = "linux_tools"
ACCEPTED = ["fold_stacks"]


def fold_stacks(lines):
    root = {"children": {}, "self": 0}
    for line in _check_lines("lines", lines):
        if not isinstance(line, str):
            raise ValueError(f"lines must hold str lines, got {line!r}")
        parts = line.strip().rsplit(None, 1)
        if len(parts) != 2 or not _COUNT.match(parts[1]) or not all(parts[0].split(";")):
            continue
        node = root
        for name in parts[0].split(";"):
            node = node["children"].setdefault(name, {"children": {}, "self": 0})
        node["self"] += int(parts[1])
    out = {}

    def walk(name, node, path):
        total = node["self"]
        for child_name, child in node["children"].items():
            total += walk(child_name, child, path | {name})
        entry = out.setdefault(name, {"self": 0, "inclusive": 0})
        entry["self"] += node["self"]
        if name not in path:
            entry["inclusive"] += total
        return total

    for name, node in root["children"].items():
        walk(name, node, frozenset())
    return out
