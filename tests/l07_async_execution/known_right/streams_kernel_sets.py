"""Correct alternative: explicit predecessor sets of kernels (events hold sets), reachability by graph search."""

MODULE = "async_exec"
ACCEPTED = ["simulate_streams"]


def simulate_streams(ops, launch_us=0.0):
    launch = _check_real("launch_us", launch_us, positive=False)
    if isinstance(ops, str | bytes) or not isinstance(ops, Sequence):
        raise ValueError("ops must be a sequence")
    kernels = []  # (name, stream, reads, writes)
    preds = {}  # kernel name -> direct predecessor kernel names
    times = {}
    pending = {}  # stream -> kernels the stream's next kernel must follow (stream order + waits)
    events = {}
    issued_before_sync = []
    host = 0.0
    for i, raw in enumerate(ops):
        op = _check_op(i, raw, {k[0] for k in kernels}, set(events))
        if op[0] == "kernel":
            _, stream, name, dur, reads, writes = op
            host += launch
            deps = set(pending.get(stream, ())) | set(issued_before_sync)
            start = max([host] + [times[d][1] for d in deps])
            times[name] = (start, start + dur)
            preds[name] = deps
            kernels.append((name, stream, set(reads), set(writes)))
            pending[stream] = {name}
        elif op[0] == "record":
            events[op[2]] = set(pending.get(op[1], ()))
        elif op[0] == "wait":
            pending[op[1]] = set(pending.get(op[1], ())) | events[op[2]]
        else:
            issued_before_sync = [k[0] for k in kernels]
            host = max([host] + [t[1] for t in times.values()])

    def reaches(a, b):
        todo, seen = [b], set()
        while todo:
            n = todo.pop()
            for p in preds[n]:
                if p == a:
                    return True
                if p not in seen:
                    seen.add(p)
                    todo.append(p)
        return False

    hazards = []
    for j, (nb, sb, rb, wb) in enumerate(kernels):
        for na, sa, ra, wa in kernels[:j]:
            if sa != sb and not reaches(na, nb):
                for buf in sorted((wa & (rb | wb)) | (ra & wb)):
                    hazards.append((na, nb, buf))
    return {"times": times, "hazards": hazards}
