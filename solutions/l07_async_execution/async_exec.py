"""L07 · Asynchronous execution: launch-bound decode, CUDA Graphs, streams and events, implicit syncs.

The CPU only *enqueues* GPU work. When a kernel runs for less time than the CPU needs to launch the
next one (a decode step: 1-2 µs of GPU work per 5-10 µs launch), the GPU idles between kernels and the
step is launch-bound; a CUDA Graph replaces the n launches by one. Streams are FIFO queues ordered
with each other only by events and host syncs: two kernels on different streams that touch one buffer
with no such edge between them race, however the timeline happens to fall. A host sync (``.item()``,
``.cpu()``, ...) inside a loop drains the queue at every iteration.

Conventions: times are microseconds (floats, ``_us``); counts are exact ints (``check_int``). Invalid
arguments raise ValueError naming the argument, or the entry (``ops[3]``, ``capture_sizes[2]``).
"""

from __future__ import annotations

import ast
import math
from collections.abc import Sequence

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int

# vLLM's default CUDA Graph capture sizes end at 512 (see vllm_capture_sizes).
VLLM_MAX_CAPTURE_SIZE = 512


def _check_real(name: str, value: object, *, positive: bool) -> float:
    """A finite real (not a bool), > 0 when ``positive`` else >= 0, or ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number of microseconds, got {value!r}")
    if positive and value <= 0:
        raise ValueError(f"{name} must be > 0, got {value!r}")
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value!r}")
    return float(value)


# ---------------------------------------------------------------------------------------------
# 1. Launch-bound utilization and the CUDA Graph speedup
# ---------------------------------------------------------------------------------------------


def launch_bound_utilization(kernel_us: float, gap_us: float) -> float:
    """Fraction of the time the GPU computes when each kernel of ``kernel_us`` is followed by an idle gap.

    utilization = kernel_us / (kernel_us + gap_us), in (0, 1].

    Worked example (the lecture's decode step): a 1.5 µs kernel, then 6.5 µs waiting for the next
    launch: ``launch_bound_utilization(1.5, 6.5)`` = 0.1875, "under 20 %".

    Errors: ``kernel_us`` not a finite number > 0; ``gap_us`` not a finite number >= 0.
    """
    k = _check_real("kernel_us", kernel_us, positive=True)
    g = _check_real("gap_us", gap_us, positive=False)
    # TODO: the busy share of one kernel-plus-gap period.
    ### BEGIN SOLUTION
    return k / (k + g)
    ### END SOLUTION


def eager_vs_graph(n_kernels: int, kernel_us: float, launch_us: float, graph_launch_us: float) -> dict[str, float]:
    """End-to-end time of ``n_kernels`` back-to-back kernels launched one by one (eager) vs as one graph.

    Eager pipeline model: the CPU issues kernel i (0-based) at (i + 1)·L (L = ``launch_us``, one launch
    after another); the GPU starts it at max(issue_i, end_{i-1}) and runs it for k = ``kernel_us``.
    So eager = n·L + k when L >= k (every kernel waits for its launch: launch-bound) and L + n·k when
    L < k (the queue never drains: GPU-bound). Graph: one launch of ``graph_launch_us``, then the n
    kernels back to back: graph = graph_launch_us + n·k.

    Returns ``{"eager_us", "graph_us", "gpu_busy_us" (= n·k), "eager_util" (busy / eager),
    "graph_util" (busy / graph), "speedup" (eager / graph)}``, all floats.

    Worked example (the lecture's 70B decode step, 80 layers × 18 kernels): ``eager_vs_graph(1440, 1.2,
    7.0, 3.0)`` → eager 10 081.2 µs, graph 1731.0 µs, busy 1728.0 µs, eager_util 0.171408, graph_util
    0.998267, speedup 5.823917. With launch 0.5 µs < kernel 1.2 µs: eager 1728.5 µs, speedup 0.998556
    (a graph buys nothing when the GPU is the bottleneck).

    Errors: ``n_kernels`` not an int >= 1; ``kernel_us`` not > 0; ``launch_us`` or ``graph_launch_us``
    not a finite number >= 0.
    """
    n = check_int("n_kernels", n_kernels, 1)
    k = _check_real("kernel_us", kernel_us, positive=True)
    launch = _check_real("launch_us", launch_us, positive=False)
    graph_launch = _check_real("graph_launch_us", graph_launch_us, positive=False)
    # TODO: the eager pipeline's end time (closed form or the per-kernel loop), the graph's, and the ratios.
    ### BEGIN SOLUTION
    busy = n * k
    eager = n * launch + k if launch >= k else launch + n * k
    graph = graph_launch + busy
    return {
        "eager_us": eager,
        "graph_us": graph,
        "gpu_busy_us": busy,
        "eager_util": busy / eager,
        "graph_util": busy / graph,
        "speedup": eager / graph,
    }
    ### END SOLUTION


# ---------------------------------------------------------------------------------------------
# 2. Multi-bucket CUDA Graphs: which graph serves a batch
# ---------------------------------------------------------------------------------------------


def vllm_capture_sizes(max_size: int = VLLM_MAX_CAPTURE_SIZE) -> list[int]:
    """vLLM's default CUDA Graph capture sizes up to ``max_size``: 1, 2, 4, then every multiple of 8.

    ``[s for s in (1, 2, 4) if s <= max_size] + list(range(8, max_size + 1, 8))``, ascending.
    67 sizes for 512: [1, 2, 4, 8, 16, 24, ..., 504, 512]. ``vllm_capture_sizes(6)`` = [1, 2, 4].

    Errors: ``max_size`` not an int >= 1.
    """
    m = check_int("max_size", max_size, 1)
    # TODO: the three small sizes that fit, then the multiples of 8 up to max_size.
    ### BEGIN SOLUTION
    return [s for s in (1, 2, 4) if s <= m] + list(range(8, m + 1, 8))
    ### END SOLUTION


def _check_capture_sizes(capture_sizes: object) -> list[int]:
    if isinstance(capture_sizes, str | bytes) or not isinstance(capture_sizes, Sequence) or not capture_sizes:
        raise ValueError(f"capture_sizes must be a non-empty sequence of batch sizes, got {capture_sizes!r}")
    return [check_int(f"capture_sizes[{i}]", size, 1) for i, size in enumerate(capture_sizes)]


def graph_bucket(batch: int, capture_sizes: Sequence[int]) -> tuple[int, int] | None:
    """The captured graph that serves ``batch`` requests: ``(size, pad_slots)``, or None (run eager).

    The smallest captured size >= ``batch``; its ``size - batch`` slots are padding. ``None`` when the
    batch exceeds every captured size (the engine falls back to eager execution). ``capture_sizes``
    need not be sorted; duplicates are harmless.

    Worked examples with ``vllm_capture_sizes()``: 13 → (16, 3) (the lecture's example); 257 →
    (264, 7); 3 → (4, 1); 512 → (512, 0); 513 → None. With the lecture's list [1, 2, 4, ..., 256]:
    13 → (16, 3), 129 → (256, 127), 257 → None.

    Errors: ``batch`` not an int >= 1; ``capture_sizes`` empty or not a sequence; an entry that is
    not an int >= 1 names ``capture_sizes[i]``.
    """
    b = check_int("batch", batch, 1)
    sizes = _check_capture_sizes(capture_sizes)
    # TODO: the smallest captured size that holds the batch, and the padding it costs.
    ### BEGIN SOLUTION
    fitting = [s for s in sizes if s >= b]
    if not fitting:
        return None
    size = min(fitting)
    return (size, size - b)
    ### END SOLUTION


# ---------------------------------------------------------------------------------------------
# 3. Streams and events: timing, happens-before and data races
# ---------------------------------------------------------------------------------------------


def _names(where: str, field: str, value: object) -> list[str]:
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise ValueError(f"{where}: {field} must be a sequence of buffer names, got {value!r}")
    if not all(isinstance(x, str) for x in value):
        raise ValueError(f"{where}: every buffer in {field} must be a str, got {value!r}")
    return list(value)


def _check_op(i: int, op: object, kernels: set[str], events: set[str]) -> tuple:
    """One op of ``simulate_streams``, checked; ``kernels`` and ``events`` are the names seen so far."""
    where = f"ops[{i}]"
    shapes = (
        "('kernel', stream, name, dur_us, reads, writes), ('record', stream, event), ('wait', stream, event), ('sync',)"
    )
    if not isinstance(op, tuple | list) or not op or op[0] not in ("kernel", "record", "wait", "sync"):
        raise ValueError(f"{where} must be one of {shapes}, got {op!r}")
    kind = op[0]
    want = {"kernel": 6, "record": 3, "wait": 3, "sync": 1}[kind]
    if len(op) != want:
        raise ValueError(f"{where}: a {kind!r} op has {want} fields, got {op!r}")
    if kind == "sync":
        return ("sync",)
    if not isinstance(op[1], str):
        raise ValueError(f"{where}: the stream must be a str, got {op[1]!r}")
    if kind == "kernel":
        _, stream, name, dur, reads, writes = op
        if not isinstance(name, str):
            raise ValueError(f"{where}: the kernel name must be a str, got {name!r}")
        if name in kernels:
            raise ValueError(f"{where}: kernel name {name!r} is used twice")
        if isinstance(dur, bool) or not isinstance(dur, int | float) or not math.isfinite(dur) or dur <= 0:
            raise ValueError(f"{where}: dur_us must be a finite number > 0, got {dur!r}")
        return ("kernel", stream, name, float(dur), _names(where, "reads", reads), _names(where, "writes", writes))
    if not isinstance(op[2], str):
        raise ValueError(f"{where}: the event must be a str, got {op[2]!r}")
    if kind == "wait" and op[2] not in events:
        raise ValueError(f"{where}: event {op[2]!r} is waited on before any record of it")
    return tuple(op)


def simulate_streams(ops: Sequence[tuple], launch_us: float = 0.0) -> dict:
    """Play a host program of kernels, event records/waits and syncs on CUDA streams.

    ``ops`` in host program order:

    * ``("kernel", stream, name, dur_us, reads, writes)``: the host spends ``launch_us`` to issue it
      (issue time = running host time); ``reads``/``writes`` are buffer names;
    * ``("record", stream, event)``: the event completes once everything enqueued on ``stream`` so far
      has (its last kernel, and what that stream was made to wait for since); recording again
      replaces what a *later* wait sees. A record on a stream with nothing enqueued is an empty event;
    * ``("wait", stream, event)``: later work on ``stream`` waits for the event as last recorded;
    * ``("sync",)``: the host waits for every kernel issued so far (host time = the latest end so far,
      if later than now).

    A kernel starts at max(its issue time, the end of the previous kernel of its stream, the end of
    every kernel its stream waited for through events since that kernel). Happens-before is the
    transitive closure of three kinds of edges: stream order, event record → wait → next kernel, and
    sync (every kernel issued before a sync → every kernel issued after it).

    Returns ``{"times": {name: (start_us, end_us)}, "hazards": [(earlier, later, buffer), ...]}``.
    A hazard is a pair of kernels on different streams, neither happening before the other, that share
    a buffer at least one of them writes (W-R, R-W or W-W); one entry per shared buffer, sorted by
    (later kernel's index, earlier kernel's index, buffer). Hazards depend on ordering only, never on
    timing: two kernels whose intervals happen not to overlap still race.

    Worked examples: ``[("kernel","s0","h2d",10,[],["x"]), ("kernel","s1","gemm",20,["x"],["y"])]``
    → h2d (0, 10), gemm (0, 20), hazards [("h2d", "gemm", "x")]; with ``("record","s0","e")`` and
    ``("wait","s1","e")`` between them → gemm (10, 30), no hazard. The ``record_stream`` case with
    ``launch_us=1``: ``("kernel","side","use_x",50,["x"],["z"])`` then ``("kernel","main","realloc_x",
    5,[],["x"])`` → use_x (1, 51), realloc_x (2, 7), hazard ("use_x", "realloc_x", "x"); a ``("sync",)``
    between them → realloc_x (52, 57), no hazard.

    Errors: ``launch_us`` not a finite number >= 0; ``ops`` not a sequence; ``ops[i]`` malformed, a
    kernel name used twice, ``dur_us`` <= 0, or a wait on an event never recorded before it.
    """
    launch = _check_real("launch_us", launch_us, positive=False)
    if isinstance(ops, str | bytes) or not isinstance(ops, Sequence):
        raise ValueError(f"ops must be a sequence of op tuples, got {ops!r}")
    # TODO: walk the ops keeping host time, each stream's frontier (what its next kernel must follow,
    # as a set of kernels and the time they end) and each event's captured frontier; then compare pairs.
    ### BEGIN SOLUTION
    host = 0.0
    names: list[str] = []
    times: dict[str, tuple[float, float]] = {}
    access: list[tuple[str, set[str], set[str]]] = []  # (stream, reads, writes) per kernel
    before: list[int] = []  # bit j of before[i]: kernel j happens before kernel i
    frontier: dict[str, tuple[int, float]] = {}  # stream -> (kernels its next kernel follows, their end)
    events: dict[str, tuple[int, float]] = {}
    synced, latest_end = 0, 0.0
    for i, raw in enumerate(ops):
        op = _check_op(i, raw, set(names), set(events))
        if op[0] == "kernel":
            _, stream, name, dur, reads, writes = op
            host += launch
            mask, ready = frontier.get(stream, (0, 0.0))
            start = max(host, ready)
            end = start + dur
            j = len(names)
            names.append(name)
            times[name] = (start, end)
            access.append((stream, set(reads), set(writes)))
            before.append(mask | synced)
            frontier[stream] = (mask | synced | (1 << j), end)
            latest_end = max(latest_end, end)
        elif op[0] == "record":
            events[op[2]] = frontier.get(op[1], (0, 0.0))
        elif op[0] == "wait":
            mask, ready = frontier.get(op[1], (0, 0.0))
            e_mask, e_ready = events[op[2]]
            frontier[op[1]] = (mask | e_mask, max(ready, e_ready))
        else:
            host = max(host, latest_end)
            synced = (1 << len(names)) - 1
    hazards = []
    for later in range(len(names)):
        s_l, r_l, w_l = access[later]
        for earlier in range(later):
            s_e, r_e, w_e = access[earlier]
            if s_e == s_l or before[later] >> earlier & 1:
                continue
            shared = (w_e & (r_l | w_l)) | (r_e & w_l)
            hazards.extend((names[earlier], names[later], buf) for buf in sorted(shared))
    return {"times": times, "hazards": hazards}
    ### END SOLUTION


# ---------------------------------------------------------------------------------------------
# 4. A lint for implicit host-device syncs inside loops
# ---------------------------------------------------------------------------------------------

SYNC_METHODS = ("item", "cpu", "tolist", "numpy", "nonzero", "synchronize")


def find_implicit_syncs(source: str) -> list[tuple[int, str]]:
    """The host-device syncs written inside loops of ``source`` (Python code), as ``(line, kind)``.

    A hit is a call lexically inside the body of a ``for``/``while`` (or a ``while`` test, which runs
    every iteration), but not inside a ``def``, ``lambda`` or ``class`` nested there (its body runs
    when called, not per iteration); a loop inside such a nested function counts again. A ``for``'s
    iterable and a loop's ``else`` run once and do not count; comprehensions are expressions like
    any other (one inside a loop counts). The calls:

    * a method call ``.item() .cpu() .tolist() .numpy() .nonzero() .synchronize()``: kind = the
      method's name (``torch.nonzero(x)`` → "nonzero", ``torch.cuda.synchronize()`` → "synchronize");
    * ``.to("cpu")`` (or ``.to(device="cpu")``) → "cpu";
    * ``bool(<anything but a constant>)`` → "bool" (the truth value of a GPU tensor is a sync).

    Sorted by (line, column) of the method's name. Syntactic only: ``print(t)`` of a tensor and
    ``if loss < 0.01:`` also sync, but a lint cannot see types.

    Worked example::

        for step in range(n):
            p = logits.softmax(-1).max().item()     # (line, "item")
            while flag.item():                      # (line, "item"): a while test
                ...
            fn = lambda: x.item()                   # not a hit: runs when called

    Errors: ``source`` not a str, or not valid Python.
    """
    if not isinstance(source, str):
        raise ValueError(f"source must be a str of Python code, got {type(source).__name__}")
    try:
        tree = ast.parse(source)
    except SyntaxError as err:
        raise ValueError(f"source is not valid Python: {err}") from None

    # TODO: walk the tree, knowing at each node whether it runs once per loop iteration; collect sync calls.
    ### BEGIN SOLUTION
    def sync_kind(node: ast.AST) -> tuple[int, int, str] | None:
        """``(line, column, kind)`` when ``node`` is a call that syncs the host with the GPU, else None.

        Line and column are where the method's name (or ``bool``) is written, so that a chain
        ``x.cpu().numpy()`` reads cpu, then numpy.
        """
        if not isinstance(node, ast.Call):
            return None
        func = node.func
        if isinstance(func, ast.Attribute):
            where = (func.end_lineno, func.end_col_offset - len(func.attr))
            if func.attr in SYNC_METHODS:
                return (*where, func.attr)
            if func.attr == "to":
                device = [kw.value for kw in node.keywords if kw.arg == "device"]
                target = node.args[0] if node.args else (device[0] if device else None)
                if isinstance(target, ast.Constant) and target.value == "cpu":
                    return (*where, "cpu")
            return None
        one_arg = len(node.args) == 1 and not node.keywords
        if isinstance(func, ast.Name) and func.id == "bool" and one_arg and not isinstance(node.args[0], ast.Constant):
            return (func.lineno, func.col_offset, "bool")
        return None

    hits: list[tuple[int, int, str]] = []

    def visit(node: ast.AST, in_loop: bool) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            in_loop = False
        if in_loop and (hit := sync_kind(node)) is not None:
            hits.append(hit)
        if isinstance(node, ast.For | ast.AsyncFor):
            visit(node.target, in_loop)
            visit(node.iter, in_loop)
            for child in node.body:
                visit(child, True)
            for child in node.orelse:
                visit(child, in_loop)
        elif isinstance(node, ast.While):
            visit(node.test, True)
            for child in node.body:
                visit(child, True)
            for child in node.orelse:
                visit(child, in_loop)
        else:
            for child in ast.iter_child_nodes(node):
                visit(child, in_loop)

    visit(tree, False)
    return [(line, kind) for line, _col, kind in sorted(hits)]
    ### END SOLUTION
