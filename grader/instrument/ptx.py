"""A PTX interpreter: one launch of a kernel, as NVRTC compiled it, run in Python/NumPy over host copies of its
arguments, and the shared-memory bank conflicts of that launch counted from the accesses it made.

Why (grader/THREAT_MODEL.md R3.1): the CPU executor runs the learner's native code, which can reach the process
it runs in by address; numbers that process prints are the kernel's word. Here no learner code runs: the PTX is
data (NVRTC's output for the same preprocessed source, :func:`grader.instrument.cu_source.for_nvrtc`), read and
interpreted by the judge's own code, so the counts cannot be forged by the kernel, and the outputs it computes can be
held against the executor's (a file whose NVRTC reading computes something else than its g++ reading is refused
by the caller, ``grader.instrument.cuda.bank_conflicts``).

The model (:class:`Launch`): blocks run one after another; the threads of a block are SIMT lanes: each register is
a NumPy array over the block's threads, and one step runs one instruction for every thread at the lowest program
counter among the threads that have not exited and do not wait at a barrier (the others keep their own counters):
structured ``if``/loops reconverge where their paths meet, and the lanes of a warp that run an instruction together
are one warp request. ``bar.sync`` waits for every thread that has not exited. Global memory is one byte buffer per
pointer argument (and per module ``.global`` variable), ``.shared`` variables (static, then ``extern`` dynamic) one
byte buffer per block, poisoned with 0xff bytes (NaN for floats) as the executor does, ``.local`` one buffer per
thread; generic addresses are tagged by space. An access outside a buffer stops the launch with the PTX and source
line. Floats are IEEE as on a GPU (fp32 arithmetic in float32, ``fma`` rounded once from float64, directed
rounding modes honoured, ``.approx`` functions by NumPy's correctly rounded ones). An instruction it does not model
stops it with :class:`PtxUnsupported`, naming the instruction and its PTX line: never a silent wrong count.

Bank conflicts (:func:`count_bank_conflicts`): each executed ``ld``/``st``/``atom``/``red`` that reaches shared
memory is one request per warp over the lanes that ran it together; its degree is the most distinct 4-byte words
one of 32 banks serves (lanes on one word share it), per half-warp for 8-byte and per quarter-warp for 16-byte
accesses (the phases a GPU serves them in). The line is the ``.loc`` of the instruction (NVRTC's
``--generate-line-info``), the array the ``.shared`` symbol its addresses fall in, demangled (``_ZZ4kernE2Ks`` ->
``Ks``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from grader.core.target import SubmissionError
from grader.i18n import _

WARP = 32
N_BANKS = 32
POISON = 0xFF
DYNAMIC_ALIGN = 16
# generic addresses: the top bits say the space (global buffer i: i + 1; shared and local: their own tags)
TAG_SHIFT = 40
OFFSET_MASK = (1 << TAG_SHIFT) - 1
SHARED_TAG = 0xFE
LOCAL_TAG = 0xFD
STEP_LIMIT = 5_000_000  # instruction steps (thread groups) per launch, ~100x the capstone's: an endless loop stops


class PtxUnsupported(SubmissionError):
    """The PTX holds an instruction (or a form of one) the interpreter does not model."""


class PtxFault(AssertionError):
    """The interpreted kernel went wrong: an access outside its buffers, a trap, a barrier not every thread reaches."""


# ---- parsing ---------------------------------------------------------------------------------------------------

_DTYPES = {
    "pred": np.dtype(bool),
    "b8": np.dtype(np.uint8), "u8": np.dtype(np.uint8), "s8": np.dtype(np.int8),
    "b16": np.dtype(np.uint16), "u16": np.dtype(np.uint16), "s16": np.dtype(np.int16), "f16": np.dtype(np.float16),
    "bf16": np.dtype(np.uint16),
    "b32": np.dtype(np.uint32), "u32": np.dtype(np.uint32), "s32": np.dtype(np.int32), "f32": np.dtype(np.float32),
    "f16x2": np.dtype(np.uint32), "bf16x2": np.dtype(np.uint32),
    "b64": np.dtype(np.uint64), "u64": np.dtype(np.uint64), "s64": np.dtype(np.int64), "f64": np.dtype(np.float64),
}
_RAW = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32), 8: np.dtype(np.uint64)}
_SIGNED = {1: np.dtype(np.int8), 2: np.dtype(np.int16), 4: np.dtype(np.int32), 8: np.dtype(np.int64)}
_FLOAT = {2: np.dtype(np.float16), 4: np.dtype(np.float32), 8: np.dtype(np.float64)}


def _types_of(parts: Sequence[str]) -> list[str]:
    return [p for p in parts if p in _DTYPES]


@dataclass
class Instr:
    opcode: str  # e.g. "ld.shared.v4.f32"
    args: list[str]
    pred: tuple[str, bool] | None  # (register, negated)
    line: int  # the learner's source line (.loc), 0 if unknown
    ptx_line: int  # 1-based line of the PTX text
    text: str

    @property
    def parts(self) -> list[str]:
        return self.opcode.split(".")


@dataclass
class Kernel:
    name: str
    params: list[tuple[str, str, int]]  # (name, type, bytes)
    regs: dict[str, str]  # register -> type
    shared: list[tuple[str, int, int]]  # (symbol, align, bytes) declared in the kernel
    local: list[tuple[str, int, int]]
    code: list[Instr]
    labels: dict[str, int]


@dataclass
class Module:
    kernels: dict[str, Kernel]
    globals: list[tuple[str, int, bytes]]  # (symbol, align, initial bytes)
    shared: list[tuple[str, int, int]]  # module-scope .shared (static; template statics)
    extern_shared: list[tuple[str, int]]  # (symbol, align): dynamic shared memory
    ptx: str


_LOC = re.compile(r"^\s*\.loc\s+(\d+)\s+(\d+)\s+\d+(?:.*inlined_at\s+(\d+)\s+(\d+))?")
_FILE = re.compile(r'^\s*\.file\s+(\d+)\s+"([^"]*)"')
_VAR = re.compile(r"^\s*(?:\.visible\s+|\.extern\s+|\.weak\s+)*\.(shared|global|const|local)\s+(?:\.align\s+(\d+)\s+)?"
                  r"\.(\w+)\s+([\w$]+)(?:\[(\d*)\])?(?:\s*=\s*\{([^}]*)\})?(?:\s*=\s*([-\w.]+))?\s*;?")
_REG = re.compile(r"^\s*\.reg\s+\.(\w+)\s+(.+?);")
_PARAM = re.compile(r"\.param\s+(?:\.align\s+\d+\s+)?\.(\w+)\s+([\w$]+)(?:\[(\d+)\])?")


def _strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group().count("\n"), text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def parse(ptx: str, source_name: str = "") -> Module:
    """The kernels, module variables and code of a PTX text (NVRTC's)."""
    raw_lines = ptx.splitlines()
    files = {int(m.group(1)): m.group(2) for m in map(_FILE.match, raw_lines) if m}
    mine = {i for i, f in files.items() if source_name and f.rsplit("/", 1)[-1] == source_name.rsplit("/", 1)[-1]}
    if not mine:
        mine = {1}
    lines = _strip_comments(ptx).splitlines()
    kernels: dict[str, Kernel] = {}
    globals_: list[tuple[str, int, bytes]] = []
    shared: list[tuple[str, int, int]] = []
    extern_shared: list[tuple[str, int]] = []
    i, n = 0, len(lines)
    while i < n:
        line = lines[i].strip()
        if re.match(r"^(?:\.visible\s+|\.weak\s+)*\.entry\b", line):
            i = _parse_entry(lines, i, mine, kernels)
            continue
        if re.match(r"^(?:\.visible\s+|\.weak\s+|\.extern\s+)*\.func\b", line):
            while i < n and ";" not in lines[i] and "{" not in lines[i]:
                i += 1
            if i < n and "{" in lines[i]:  # a device function NVRTC did not inline: skip its body
                depth = 0
                while i < n:
                    depth += lines[i].count("{") - lines[i].count("}")
                    i += 1
                    if depth <= 0:
                        break
                continue
            i += 1
            continue
        m = _VAR.match(line)
        if m and m.group(1) in ("shared", "global", "const"):
            space, align, typ, name, count, init, scalar = m.groups()
            size = _DTYPES[typ].itemsize if typ in _DTYPES else 1
            if space == "shared":
                if "extern" in line or count == "":
                    extern_shared.append((name, int(align or DYNAMIC_ALIGN)))
                else:
                    shared.append((name, int(align or size), size * int(count or 1)))
            else:
                nbytes = size * int(count or 1)
                data = np.zeros(nbytes, np.uint8)
                if init:
                    vals = [int(v, 0) for v in init.replace(" ", "").split(",") if v]
                    data[: len(vals) * size] = np.array(vals, dtype=_RAW.get(size, np.uint8)).view(np.uint8)
                elif scalar:
                    data[:size] = np.array([_immediate(scalar, _DTYPES[typ])], _DTYPES[typ]).view(np.uint8)
                globals_.append((name, int(align or size), data.tobytes()))
        i += 1
    return Module(kernels, globals_, shared, extern_shared, ptx)


def _parse_entry(lines: list[str], i: int, mine: set[int], kernels: dict[str, Kernel]) -> int:
    j = i
    while lines[j].strip() != "{" and not lines[j].rstrip().endswith("{"):
        j += 1
    head = lines[i:j]
    i = j
    head_text = " ".join(head)
    name = re.search(r"\.entry\s+([\w$]+)", head_text).group(1)
    params = []
    for m in _PARAM.finditer(head_text):
        typ, pname, count = m.groups()
        size = (_DTYPES[typ].itemsize if typ in _DTYPES else 1) * int(count or 1)
        params.append((pname, typ, size))
    # the body: from the first "{" to its matching "}"
    while "{" not in lines[i]:
        i += 1
    depth = 0
    regs: dict[str, str] = {}
    shared, local, code, labels = [], [], [], {}
    line_no = 0
    pending = ""
    pending_at = 0
    while i < len(lines):
        raw = lines[i]
        i += 1
        s = raw.strip()
        if not pending:
            if s.startswith("{"):
                depth += 1
                s = s[1:].strip()
            if s.startswith("}"):
                depth -= 1
                if depth == 0:
                    break
                s = s[1:].strip()
            if not s:
                continue
            m = _LOC.match(s)
            if m:
                f, ln, inf, inl = m.groups()
                if int(f) in mine and int(ln):
                    line_no = int(ln)
                elif inf and int(inf) in mine and int(inl):
                    line_no = int(inl)
                continue
            m = re.match(r"^([\w$]+):\s*$", s)
            if m:
                labels[m.group(1)] = len(code)
                continue
            if s.startswith(".reg"):
                m = _REG.match(s)
                if m:
                    typ = m.group(1)
                    for r in m.group(2).split(","):
                        r = r.strip()
                        rm = re.match(r"^(%[\w$]+)<(\d+)>$", r)
                        if rm:
                            for k in range(int(rm.group(2))):
                                regs[f"{rm.group(1)}{k}"] = typ
                        elif r:
                            regs[r] = typ
                continue
            if s.startswith((".shared", ".local")):
                m = _VAR.match(s)
                if m:
                    space, align, typ, sym, count = m.groups()[:5]
                    size = (_DTYPES[typ].itemsize if typ in _DTYPES else 1) * int(count or 1)
                    (shared if space == "shared" else local).append((sym, int(align or 1), size))
                continue
            if s.startswith(".") or s.startswith("}"):
                continue  # .param declarations of a call sequence, .pragma, .maxntid...
            pending_at = i
        pending = (pending + " " + s).strip()
        if ";" not in pending:
            continue
        stmt, pending = pending.split(";", 1)[0].strip(), ""
        code.append(_instruction(stmt, line_no, pending_at))
    kernels[name] = Kernel(name, params, regs, shared, local, code, labels)
    return i


def _instruction(stmt: str, line: int, ptx_line: int) -> Instr:
    pred = None
    m = re.match(r"^@(!?)(%[\w$]+)\s+(.*)$", stmt)
    if m:
        pred = (m.group(2), m.group(1) == "!")
        stmt = m.group(3)
    opcode, _sep, rest = stmt.partition(" ")
    opcode = opcode.strip()
    args = _split_args(rest.strip())
    return Instr(opcode, args, pred, line, ptx_line, stmt)


def _split_args(text: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "{[(":
            depth += 1
        elif ch in "}])":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def _immediate(tok: str, dt: np.dtype):
    """A PTX immediate as a NumPy scalar of ``dt`` (0f/0d hex floats, hex/decimal integers, decimal floats)."""
    t = tok.strip()
    if re.match(r"^0[fF][0-9a-fA-F]{8}$", t):
        v = np.array([int(t[2:], 16)], np.uint32).view(np.float32)[0]
        return v.astype(dt) if dt.kind == "f" else np.array([int(t[2:], 16)], np.uint32).astype(dt)[0]
    if re.match(r"^0[dD][0-9a-fA-F]{16}$", t):
        v = np.array([int(t[2:], 16)], np.uint64).view(np.float64)[0]
        return v.astype(dt) if dt.kind == "f" else np.array([int(t[2:], 16)], np.uint64).astype(dt)[0]
    if re.match(r"^-?(0[xX][0-9a-fA-F]+|\d+)[uU]?$", t):
        v = int(t.rstrip("uU"), 0)
        if dt.kind == "f":
            return dt.type(v)
        if dt.kind == "b":
            return np.bool_(v != 0)
        return np.array([v & ((1 << (8 * dt.itemsize)) - 1)], _RAW[dt.itemsize]).view(dt)[0]
    if re.match(r"^-?\d+\.\d*(e[-+]?\d+)?$", t):
        return dt.type(float(t))
    raise ValueError(t)


def demangle_shared(symbol: str) -> str:
    """``_ZZ9flash_fwdE2Ks`` -> ``Ks`` (a function's block-scope static: the last name of the nested name);
    ``_ZZN...E5tile`` likewise; a plain name stays."""
    m = re.match(r"^_ZZ.*E(\d+)(\w+)$", symbol)
    if m:
        k = int(m.group(1))
        tail = m.group(2)
        if len(tail) >= k:
            return tail[:k]
    return symbol


# ---- the launch ------------------------------------------------------------------------------------------------


@dataclass
class SharedAccess:
    """Bank statistics of one PTX instruction over the launch."""

    line: int
    kind: str
    degree: int = 0
    count: int = 0
    requests: int = 0
    wavefronts: int = 0
    arrays: set[str] = field(default_factory=set)


class _Memory:
    """A byte buffer with views by element width (over a length padded to 16)."""

    def __init__(self, data: np.ndarray, name: str):
        self.size = int(data.size)
        padded = np.full(-(-max(self.size, 1) // 16) * 16, POISON, np.uint8)
        padded[: self.size] = data
        self.data = padded
        self.name = name
        self.views = {w: padded.view(_RAW[w]) for w in (1, 2, 4, 8)}


class Launch:
    """One launch of ``kernel`` (see the module docstring); :meth:`run` fills :attr:`buffers` and :attr:`banks`."""

    def __init__(self, module: Module, kernel: str, grid: Sequence[int], block: Sequence[int],
                 args: Sequence[object], *, shared_bytes: int = 0, label: str = "kernel.cu"):
        if kernel not in module.kernels:
            raise PtxUnsupported(_("{label}: NVRTC's PTX has no kernel named {name}").format(label=label, name=kernel))
        self.module, self.k, self.label = module, module.kernels[kernel], label
        self.grid = tuple((*grid, 1, 1)[:3])
        self.block = tuple((*block, 1, 1)[:3])
        self.T = int(np.prod(self.block))
        if len(args) != len(self.k.params):
            raise PtxUnsupported(_("{label}: {name} takes {n} parameters in PTX, the launch passes {m}").format(
                label=label, name=kernel, n=len(self.k.params), m=len(args)))
        # global memory: one buffer per pointer argument, then one per module variable
        self.mems: list[_Memory] = []
        self.buffers: list[np.ndarray] = []  # the arguments' arrays (the interpreted kernel writes their bytes)
        self.symbols: dict[str, int] = {}  # module globals -> generic address
        param = bytearray()
        for (pname, typ, size), a in zip(self.k.params, args, strict=True):
            param += b"\0" * (-len(param) % min(size, 8))
            if isinstance(a, np.ndarray):
                arr = np.ascontiguousarray(a)
                mem = _Memory(arr.reshape(-1).view(np.uint8), pname)
                self.mems.append(mem)
                self.buffers.append(arr)
                value = len(self.mems) << TAG_SHIFT
                param += int(value).to_bytes(8, "little")[:size]
            elif isinstance(a, float | np.floating) and typ in ("f32", "f64"):
                param += np.array([a], _DTYPES[typ]).tobytes()
            elif isinstance(a, bool | int | np.integer):
                param += (int(a) & ((1 << (8 * size)) - 1)).to_bytes(size, "little")
            elif isinstance(a, float | np.floating):
                param += np.array([a], np.float64 if size == 8 else np.float32).tobytes()[:size]
            else:
                raise PtxUnsupported(_("{label}: kernel parameter {name} of type {type} cannot take a {what}").format(
                    label=label, name=pname, type=typ, what=type(a).__name__))
        self.param_bytes = bytes(param)
        self.param_offsets, off = {}, 0
        for pname, _typ, size in self.k.params:
            off += -off % min(size, 8)
            self.param_offsets[pname] = off
            off += size
        self.n_args = len(self.mems)
        for sym, _align, data in module.globals:
            self.mems.append(_Memory(np.frombuffer(data, np.uint8), sym))
            self.symbols[sym] = len(self.mems) << TAG_SHIFT
        # shared memory: static variables (module scope, then the kernel's), then the dynamic ones at one offset
        offset = 0
        self.shared_ranges: list[tuple[int, int, str]] = []
        for sym, align, size in (*module.shared, *self.k.shared):
            offset += -offset % max(align, 1)
            self.symbols[sym] = offset
            self.shared_ranges.append((offset, offset + size, demangle_shared(sym)))
            offset += size
        offset += -offset % DYNAMIC_ALIGN
        for sym, _align in module.extern_shared:
            self.symbols[sym] = offset
            self.shared_ranges.append((offset, offset + shared_bytes, sym))
        self.shared_size = offset + shared_bytes
        self.range_starts = np.array([r[0] for r in self.shared_ranges], np.int64)
        # local memory: one depot per thread
        loff = 0
        for sym, align, size in self.k.local:
            loff += -loff % max(align, 1)
            self.symbols[sym] = loff
            loff += size
        self.local_size = -(-loff // 16) * 16
        self.banks: dict[int, SharedAccess] = {}
        self.steps = 0
        self._compile()

    # -- where a fault or an unsupported instruction is ---------------------------------------------------------

    def where(self, ins: Instr) -> str:
        src = f"{self.label} line {ins.line}" if ins.line else self.label
        return f"{src} (PTX line {ins.ptx_line}: `{ins.text}`)"

    def _unsupported(self, ins: Instr, why: str = "") -> PtxUnsupported:
        return PtxUnsupported(_(
            "{label}: the PTX interpreter that counts bank conflicts does not model `{opcode}`{why} at {where}: the "
            "count stops here rather than be wrong; write the kernel with the operations the course uses").format(
                label=self.label, opcode=ins.opcode, why=f" ({why})" if why else "", where=self.where(ins)))

    def _fault(self, ins: Instr, what: str) -> PtxFault:
        return PtxFault(_("{launch} in the PTX interpreter: {what} at {where}").format(
            launch=f"{self.k.name}<<<grid {self.grid}, block {self.block}>>>", what=what, where=self.where(ins)))

    # -- registers and operands ------------------------------------------------------------------------------

    def _compile(self) -> None:
        T = self.T
        self.regs: dict[str, np.ndarray] = {}
        for r, typ in self.k.regs.items():
            dt = _DTYPES.get(typ)
            if dt is None:
                raise PtxUnsupported(_("{label}: the PTX interpreter does not model registers of type .{type}").format(
                    label=self.label, type=typ))
            self.regs[r] = np.zeros(T, dt if dt.kind == "b" else _RAW[dt.itemsize])
        tid = np.arange(T, dtype=np.int64)
        bx, by, _bz = self.block
        self.special: dict[str, np.ndarray] = {
            "%tid.x": (tid % bx).astype(np.uint32), "%tid.y": ((tid // bx) % by).astype(np.uint32),
            "%tid.z": (tid // (bx * by)).astype(np.uint32),
            "%laneid": (tid % WARP).astype(np.uint32), "%warpid": (tid // WARP).astype(np.uint32),
        }
        for i, c in enumerate("xyz"):
            self.special[f"%ntid.{c}"] = np.full(T, self.block[i], np.uint32)
            self.special[f"%nctaid.{c}"] = np.full(T, self.grid[i], np.uint32)
            self.special[f"%ctaid.{c}"] = np.zeros(T, np.uint32)
        self.special["%nwarpid"] = np.full(T, 64, np.uint32)
        self.tid = tid
        self.lane = (tid % WARP).astype(np.int64)
        self.warp = (tid // WARP).astype(np.int64)
        self.code: list[tuple[int, object, Instr]] = []
        self.targets: list[int] = []
        for ins in self.k.code:
            kind, fn, target = self._translate(ins)
            self.code.append((kind, fn, ins))
            self.targets.append(target)

    def _reg(self, tok: str, ins: Instr) -> np.ndarray:
        if tok in self.regs:
            return self.regs[tok]
        if tok in self.special:
            return self.special[tok]
        raise self._unsupported(ins, f"operand {tok}")

    def reader(self, tok: str, dt: np.dtype, ins: Instr) -> Callable:
        """sel -> values of operand ``tok`` as ``dt`` (a register, a special register, an immediate or a symbol)."""
        tok = tok.strip()
        neg = False
        if tok.startswith("!") and dt.kind == "b":
            neg, tok = True, tok[1:]
        if tok.startswith("%"):
            arr = self._reg(tok, ins)
            if arr.dtype == dt:
                return (lambda s: ~arr[s]) if neg else (lambda s: arr[s])
            if arr.dtype.itemsize == dt.itemsize:
                v = arr.view(dt)
                return lambda s: v[s]
            if arr.dtype.kind == "b" or dt.kind == "b":
                return lambda s: arr[s].astype(dt)
            return self._resized(arr, dt)
        if tok in self.symbols:
            v = np.array([self.symbols[tok]], np.uint64).astype(dt)[0]
            return lambda s: v
        try:
            v = _immediate(tok, dt)
        except ValueError:
            raise self._unsupported(ins, f"operand {tok}") from None
        return lambda s: v

    @staticmethod
    def _resized(arr: np.ndarray, dt: np.dtype) -> Callable:
        """A register read at another width: truncated, or extended (zero, or sign for a signed type)."""
        w = dt.itemsize
        if w < arr.dtype.itemsize:
            return lambda s: arr[s].astype(_RAW[w]).view(dt)
        src = _SIGNED[arr.dtype.itemsize] if dt.kind == "i" else arr.dtype
        return lambda s: arr[s].view(src).astype(dt) if dt.kind != "f" else arr[s].astype(_RAW[w]).view(dt)

    def writer(self, tok: str, dt: np.dtype, ins: Instr) -> Callable:
        """(sel, values of type ``dt``) -> None: stores into register ``tok``."""
        tok = tok.strip()
        if tok == "_":
            return lambda s, v: None
        if tok not in self.regs:
            raise self._unsupported(ins, f"destination {tok}")
        arr = self.regs[tok]
        if arr.dtype == dt:
            def put(s, v):
                arr[s] = v
            return put
        if arr.dtype.itemsize == dt.itemsize and arr.dtype.kind != "b" and dt.kind != "b":
            view = arr.view(dt)

            def put_view(s, v):
                view[s] = v
            return put_view
        if arr.dtype.kind == "b" or dt.kind == "b":
            def put_bool(s, v):
                arr[s] = np.asarray(v).astype(arr.dtype)
            return put_bool
        w = arr.dtype.itemsize

        def put_resized(s, v):
            v = np.asarray(v, dt)
            if dt.kind == "f":
                v = v.view(_RAW[dt.itemsize])
            arr[s] = v.astype(_SIGNED[w] if dt.kind == "i" else arr.dtype).view(arr.dtype)
        return put_resized

    # -- translation: one closure per instruction ----------------------------------------------------------------

    def _translate(self, ins: Instr):
        parts = ins.parts
        op = parts[0]
        NORMAL, BRANCH, BAR, EXIT = 0, 1, 2, 3
        if op == "bra":
            target = ins.args[0]
            if target not in self.k.labels:
                raise self._unsupported(ins, "an indirect branch")
            return BRANCH, self._pred_fn(ins), self.k.labels[target]
        if op in ("ret", "exit"):
            return EXIT, self._pred_fn(ins), -1
        if op in ("bar", "barrier") and (len(parts) < 2 or parts[1] in ("sync", "cta")) and "red" not in parts:
            if len(ins.args) > 1:
                raise self._unsupported(ins, "a barrier with a thread count")
            if ins.pred:
                raise self._unsupported(ins, "a predicated barrier")
            return BAR, None, -1
        fn = self._normal(ins)
        if ins.pred is not None:
            fn = self._predicated(fn, ins)
        return NORMAL, fn, -1

    def _pred_fn(self, ins: Instr):
        if ins.pred is None:
            return None
        reg, negated = ins.pred
        arr = self._reg(reg, ins)
        return (lambda s: ~arr[s]) if negated else (lambda s: arr[s])

    def _predicated(self, fn, ins: Instr):
        pred = self._pred_fn(ins)

        def run(s):
            p = pred(s)
            if p.all():
                fn(s)
            elif p.any():
                fn(_narrow(s, p, self.T))
        return run

    def _normal(self, ins: Instr):
        parts, a = ins.parts, ins.args
        op = parts[0]
        types = _types_of(parts)
        typ = types[-1] if types else None
        dt = _DTYPES[typ] if typ else None
        mods = set(parts[1:])
        R = lambda i, t=None: self.reader(a[i], t if t is not None else dt, ins)
        W = lambda i, t=None: self.writer(a[i], t if t is not None else dt, ins)

        if op in ("membar", "fence") or (op == "bar" and "warp" in parts) or op == "pragma" or op == "prefetch":
            return lambda s: None
        if op == "trap" or op == "brkpt":
            def trap(s):
                raise self._fault(ins, "trap (an unfinished TODO, or __trap())")
            return trap
        if op == "call":
            return self._call(ins)
        if op == "mov":
            return self._mov(ins, dt)
        if op in ("ld", "ldu"):
            return self._load(ins, parts, dt)
        if op == "st":
            return self._store(ins, parts, dt)
        if op in ("atom", "red"):
            return self._atomic(ins, parts, dt)
        if op == "cvta":
            return self._cvta(ins, parts)
        if op == "cvt":
            return self._cvt(ins, parts)
        if op == "shfl":
            return self._shfl(ins, parts)
        if op == "vote":
            return self._vote(ins, parts)
        if op == "activemask":
            out = W(0, np.dtype(np.uint32))

            def activemask(s):
                active = np.zeros(self.T, bool)
                active[s] = True
                out(s, _ballot(active, self.warp, self.lane, self.T)[s])
            return activemask
        if op == "setp":
            return self._setp(ins, parts, dt)
        if op == "selp":
            x, y, p, out = R(1), R(2), self.reader(a[3], _DTYPES["pred"], ins), W(0)
            return lambda s: out(s, np.where(p(s), x(s), y(s)))
        if op == "set":
            return self._set(ins, parts)
        if dt is None:
            raise self._unsupported(ins)
        if op in ("add", "sub", "mul", "div", "rem", "min", "max", "and", "or", "xor", "fma", "mad", "shl", "shr",
                  "neg", "abs", "not", "rcp", "sqrt", "rsqrt", "ex2", "lg2", "sin", "cos", "tanh", "copysign",
                  "popc", "clz", "brev", "testp"):
            return self._arith(ins, op, mods, typ, dt)
        raise self._unsupported(ins)

    def _arith(self, ins: Instr, op: str, mods: set[str], typ: str, dt: np.dtype):
        a = ins.args
        f = dt.kind == "f"
        rnd = next((m for m in ("rn", "rz", "rm", "rp") if m in mods), "rn")
        sat = "sat" in mods
        srcs = [self.reader(t, dt, ins) for t in a[1:]]
        if op in ("shl", "shr"):
            srcs = [srcs[0], self.reader(a[2], np.dtype(np.uint32), ins)]
        out_dt = dt
        if op == "mul" and "wide" in mods or op == "mad" and "wide" in mods:
            out_dt = _SIGNED[dt.itemsize * 2] if dt.kind == "i" else _RAW[dt.itemsize * 2]
        if op in ("popc", "clz"):
            out_dt = np.dtype(np.uint32)
        if op == "testp":
            out_dt = _DTYPES["pred"]
        out = self.writer(a[0], out_dt, ins)

        def fin(v):
            if f and sat:
                v = np.clip(np.nan_to_num(v, nan=0.0), 0.0, 1.0).astype(dt)
            return v

        if f and rnd != "rn" and op in ("add", "sub", "mul", "fma", "div", "sqrt", "rcp", "mad"):
            exact = {"add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y,
                     "fma": lambda x, y, z: x * y + z, "mad": lambda x, y, z: x * y + z,
                     "div": lambda x, y: x / y, "sqrt": np.sqrt, "rcp": lambda x: 1.0 / x}[op]
            if dt.itemsize == 8:
                return lambda s: out(s, fin(exact(*(np.asarray(g(s), np.float64) for g in srcs))))

            def directed(s):
                wide = exact(*(np.asarray(g(s), np.float64) for g in srcs))
                return out(s, fin(_round_f32(wide, rnd)))
            return directed

        if op == "add":
            x, y = srcs
            return lambda s: out(s, fin(x(s) + y(s)))
        if op == "sub":
            x, y = srcs
            return lambda s: out(s, fin(x(s) - y(s)))
        if op == "mul":
            x, y = srcs
            if f:
                return lambda s: out(s, fin(x(s) * y(s)))
            if "wide" in mods:
                return lambda s: out(s, np.asarray(x(s)).astype(out_dt) * np.asarray(y(s)).astype(out_dt))
            if "hi" in mods:
                return self._mul_hi(out, x, y, dt)
            return lambda s: out(s, np.asarray(x(s)) * y(s))  # .lo: wraps in the type
        if op in ("fma", "mad") and f:
            x, y, z = srcs
            if dt.itemsize == 4:
                return lambda s: out(s, fin((np.asarray(x(s), np.float64) * y(s) + z(s)).astype(np.float32)))
            return lambda s: out(s, fin(np.asarray(x(s)) * y(s) + z(s)))
        if op == "mad":
            x, y, z = srcs
            if "wide" in mods:
                z = self.reader(a[3], out_dt, ins)
                return lambda s: out(s, np.asarray(x(s)).astype(out_dt) * np.asarray(y(s)).astype(out_dt) + z(s))
            if "hi" in mods:
                raise self._unsupported(ins)
            return lambda s: out(s, np.asarray(x(s)) * y(s) + z(s))
        if op == "div":
            x, y = srcs
            if f:
                return lambda s: out(s, fin(np.asarray(x(s)) / y(s)))
            return lambda s: out(s, _int_div(np.asarray(x(s)), np.asarray(y(s)), dt))
        if op == "rem":
            x, y = srcs
            return lambda s: out(s, _int_rem(np.asarray(x(s)), np.asarray(y(s)), dt))
        if op in ("min", "max"):
            x, y = srcs
            g = (np.fmin if op == "min" else np.fmax) if f else (np.minimum if op == "min" else np.maximum)
            return lambda s: out(s, g(x(s), y(s)))
        if op in ("and", "or", "xor"):
            x, y = srcs
            g = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[op]
            if dt.kind == "b":
                g = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}[op]
            return lambda s: out(s, g(x(s), y(s)))
        if op == "not":
            (x,) = srcs
            return lambda s: out(s, np.logical_not(x(s)) if dt.kind == "b" else np.invert(x(s)))
        if op == "shl":
            x, k = srcs
            bits = 8 * dt.itemsize
            return lambda s: out(s, _shift(np.asarray(x(s)), np.asarray(k(s)), bits, left=True))
        if op == "shr":
            x, k = srcs
            bits = 8 * dt.itemsize
            signed = typ.startswith("s")
            return lambda s: out(s, _shift(np.asarray(x(s)), np.asarray(k(s)), bits, left=False, signed=signed))
        if op == "neg":
            (x,) = srcs
            return lambda s: out(s, -np.asarray(x(s)))
        if op == "abs":
            (x,) = srcs
            return lambda s: out(s, np.abs(x(s)))
        if op == "copysign":
            x, y = srcs
            return lambda s: out(s, np.copysign(y(s), x(s)))
        if op == "popc":
            (x,) = srcs
            return lambda s: out(s, np.bitwise_count(np.asarray(x(s)).view(_RAW[dt.itemsize])).astype(np.uint32))
        if op == "clz":
            (x,) = srcs
            bits = 8 * dt.itemsize

            def clz(s):
                v = np.asarray(x(s)).view(_RAW[dt.itemsize]).astype(np.uint64)
                n = np.full(v.shape, bits, np.uint32)
                nz = v != 0
                n[nz] = bits - 1 - np.floor(np.log2(v[nz].astype(np.float64))).astype(np.uint32)
                out(s, n)
            return clz
        if op == "brev":
            (x,) = srcs
            bits = 8 * dt.itemsize

            def brev(s):
                v = np.asarray(x(s)).view(_RAW[dt.itemsize]).astype(np.uint64)
                r = np.zeros_like(v)
                for b in range(bits):
                    r |= ((v >> np.uint64(b)) & np.uint64(1)) << np.uint64(bits - 1 - b)
                out(s, r.astype(_RAW[dt.itemsize]).view(dt))
            return brev
        if op == "testp":
            (x,) = srcs
            g = {"finite": np.isfinite, "infinite": np.isinf, "number": lambda v: ~np.isnan(v), "notanumber": np.isnan,
                 "normal": lambda v: np.isfinite(v) & (np.abs(v) >= np.finfo(dt).tiny),
                 "subnormal": lambda v: (v != 0) & (np.abs(v) < np.finfo(dt).tiny)}
            which = next((m for m in mods if m in g), None)
            if which is None:
                raise self._unsupported(ins)
            return lambda s: out(s, g[which](x(s)))
        if not f:
            raise self._unsupported(ins)
        (x,) = srcs[:1]
        g = {"rcp": lambda v: dt.type(1) / v, "sqrt": np.sqrt, "rsqrt": lambda v: dt.type(1) / np.sqrt(v),
             "ex2": np.exp2, "lg2": np.log2, "sin": np.sin, "cos": np.cos, "tanh": np.tanh}[op]
        return lambda s: out(s, fin(np.asarray(g(np.asarray(x(s))), dt)))

    @staticmethod
    def _mul_hi(out, x, y, dt):
        bits = 8 * dt.itemsize
        if bits == 32:
            wide = np.int64 if dt.kind == "i" else np.uint64
            return lambda s: out(s, ((np.asarray(x(s)).astype(wide) * np.asarray(y(s)).astype(wide))
                                     >> wide(32)).astype(dt))

        def hi64(s):
            xs = np.atleast_1d(np.asarray(x(s))).astype(object)
            ys = np.atleast_1d(np.asarray(y(s))).astype(object)
            r = [(int(p) * int(q)) >> 64 for p, q in np.broadcast(xs, ys)]
            out(s, np.array([v & (2**64 - 1) for v in r], np.uint64).view(dt))
        return hi64

    def _mov(self, ins: Instr, dt):
        a = ins.args
        dst, src = a[0], a[1]
        if dst.startswith("{"):  # unpack: mov.b64 {%r1, %r2}, %rd1
            outs = [t.strip() for t in dst[1:-1].split(",")]
            wide = self.reader(src, dt, ins)
            w = dt.itemsize // len(outs)
            parts = [self.writer(o, _RAW[w], ins) for o in outs]

            def unpack(s):
                v = np.ascontiguousarray(np.atleast_1d(wide(s))).view(_RAW[w]).reshape(-1, len(outs))
                for i, put in enumerate(parts):
                    put(s, v[:, i])
            return unpack
        if src.startswith("{"):  # pack: mov.b64 %rd1, {%r1, %r2}
            ins_ = [t.strip() for t in src[1:-1].split(",")]
            w = dt.itemsize // len(ins_)
            readers = [self.reader(t, _RAW[w], ins) for t in ins_]
            out = self.writer(dst, dt, ins)
            n = len(self.tid)

            def pack(s):
                cols = [np.broadcast_to(np.asarray(r(s), _RAW[w]), (n,) if isinstance(s, slice) else (len(s),))
                        for r in readers]
                out(s, np.ascontiguousarray(np.stack(cols, axis=1)).view(dt).reshape(-1))
            return pack
        x, out = self.reader(src, dt, ins), self.writer(dst, dt, ins)
        return lambda s: out(s, x(s))

    # -- memory --------------------------------------------------------------------------------------------------

    def _address(self, tok: str, ins: Instr):
        """sel -> uint64 addresses of an ``[operand+offset]`` address."""
        m = re.match(r"^\[\s*([%\w$.]+)\s*(?:([+-])\s*(-?\w+))?\s*\]$", tok)
        if not m:
            raise self._unsupported(ins, f"address {tok}")
        base, sign, off = m.groups()
        offset = int(off, 0) * (-1 if sign == "-" else 1) if off else 0
        if base.startswith("%"):
            arr = self._reg(base, ins)
            if arr.dtype.itemsize == 8:
                v = arr.view(np.uint64)
                if offset == 0:
                    return lambda s: v[s]
                o = np.uint64(offset & (2**64 - 1))
                return lambda s: v[s] + o
            o32 = np.uint64(offset & (2**64 - 1))
            return lambda s: arr[s].astype(np.uint64) + o32
        if base in self.symbols:
            c = np.uint64((self.symbols[base] + offset) & (2**64 - 1))
            return lambda s: c
        if re.match(r"^\d+$", base):
            c = np.uint64(int(base) + offset)
            return lambda s: c
        raise self._unsupported(ins, f"address {tok}")

    def _param_address(self, tok: str, ins: Instr) -> int | None:
        m = re.match(r"^\[\s*([\w$]+)\s*(?:\+\s*(\d+))?\s*\]$", tok)
        if not m:
            raise self._unsupported(ins, f"address {tok}")
        name, off = m.group(1), int(m.group(2) or 0)
        if name in self.param_offsets:
            return self.param_offsets[name] + off
        return None  # a call sequence's own parameter (device printf's)

    def _space(self, parts: list[str]) -> str:
        for sp in ("global", "shared", "local", "param", "const"):
            if sp in parts:
                return sp
        return "generic"

    def _resolve(self, space: str, addr: np.ndarray, width: int, ins: Instr, write: bool):
        """[(memory, element offsets (bytes), lanes mask or None)] for the addresses of one access."""
        addr = np.atleast_1d(np.asarray(addr, np.uint64))
        if space == "shared":
            return [(self.shared_mem, addr.astype(np.int64), None)]
        if space == "local":
            return [(self.local_mem, addr.astype(np.int64), None)]
        tags = (addr >> np.uint64(TAG_SHIFT)).astype(np.int64)
        offs = (addr & np.uint64(OFFSET_MASK)).astype(np.int64)
        first = tags[0]
        uniq = [first] if (tags == first).all() else list(np.unique(tags))
        out = []
        for t in uniq:
            mask = None if len(uniq) == 1 else tags == t
            if t == SHARED_TAG and space == "generic":
                out.append((self.shared_mem, offs, mask))
            elif t == LOCAL_TAG and space == "generic":
                out.append((self.local_mem, offs, mask))
            elif 1 <= t <= len(self.mems):
                out.append((self.mems[t - 1], offs, mask))
            else:
                raise self._fault(ins, f"a {'write' if write else 'read'} of {width} bytes at address "
                                       f"{int(addr[0] if mask is None else addr[mask][0]):#x}, in no buffer "
                                       "(a null or stray pointer)")
        return out

    def _check(self, mem: _Memory, offs: np.ndarray, width: int, ins: Instr, write: bool, size: int) -> None:
        if offs.size and (offs.min() < 0 or offs.max() + width > size):
            bad = int(offs[(offs < 0) | (offs + width > size)][0])
            what = "shared memory" if mem is self.shared_mem else (
                "local memory" if mem is self.local_mem else f"`{mem.name}`")
            raise self._fault(ins, f"out-of-bounds {'write' if write else 'read'} of {width} bytes at byte {bad} of "
                                   f"{what} ({size} bytes)")
        if offs.size and (offs % width).any():
            raise self._fault(ins, f"misaligned {width}-byte access")

    def _access(self, space, addr, width, ins, write, s, values=None, count_width=None):
        """Load (``values`` None: returns the raw values) or store ``values`` (raw, ``width`` bytes each) for the
        threads ``s``. ``count_width``: the width the bank count sees (0: not counted; a vector's first element
        counts the whole vector)."""
        n = self.T if isinstance(s, slice) else len(s)
        addr = np.broadcast_to(np.asarray(addr, np.uint64), (n,))
        result = None
        for mem, offs, mask in self._resolve(space, addr, width, ins, write):
            sub = s if mask is None else _narrow(s, mask, self.T)
            o = offs if mask is None else offs[mask]
            if mem is self.local_mem:
                self._check(mem, o, width, ins, write, self.local_size)
                o = o + (self.tid if isinstance(sub, slice) else sub) * self.local_size
            else:
                self._check(mem, o, width, ins, write, mem.size)
            if mem is self.shared_mem and count_width != 0:
                self._note_shared(ins, write, sub, o, count_width or width)
            view = mem.views[width]
            if values is None:
                got = view[o // width]
                if mask is None:
                    return got
                if result is None:
                    result = np.zeros(n, _RAW[width])
                result[mask] = got
            else:
                v = np.broadcast_to(np.asarray(values).astype(_RAW[width], copy=False), (n,))
                view[o // width] = v if mask is None else v[mask]
        return result

    def _load(self, ins: Instr, parts: list[str], dt):
        space = self._space(parts)
        vec = next((int(p[1:]) for p in parts if re.match(r"^v\d$", p)), 1)
        width = dt.itemsize
        dst = ins.args[0]
        outs = [t.strip() for t in dst[1:-1].split(",")] if dst.startswith("{") else [dst]
        if len(outs) != vec or dt.kind == "b":
            raise self._unsupported(ins, "vector width")
        signed = dt.kind == "i"  # sign-extended into a wider register; the others zero-extended
        writers = [None if o == "_" else self.writer(o, dt if signed else _RAW[width], ins) for o in outs]
        if space == "param":
            off = self._param_address(ins.args[1], ins)

            def ld_param(s):
                for i, put in enumerate(writers):
                    if put is not None:
                        v = np.zeros(1, dt) if off is None else np.frombuffer(self.param_bytes, dt, 1, off + i * width)
                        put(s, v[0] if signed else v.view(_RAW[width])[0])
            return ld_param
        addr = self._address(ins.args[1], ins)

        def ld(s):
            base = addr(s)
            for i, put in enumerate(writers):
                at = base if i == 0 else np.asarray(base, np.uint64) + np.uint64(i * width)
                raw = self._access(space, at, width, ins, False, s, count_width=width * vec if i == 0 else 0)
                if put is not None:
                    put(s, raw.view(dt) if signed else raw)
        return ld

    def _store(self, ins: Instr, parts: list[str], dt):
        space = self._space(parts)
        vec = next((int(p[1:]) for p in parts if re.match(r"^v\d$", p)), 1)
        width = dt.itemsize
        src = ins.args[1]
        srcs = [t.strip() for t in src[1:-1].split(",")] if src.startswith("{") else [src]
        if len(srcs) != vec:
            raise self._unsupported(ins, "vector width")
        readers = [self.reader(t, _RAW[width], ins) for t in srcs]
        if space == "param":
            if self._param_address(ins.args[0], ins) is not None:
                raise self._unsupported(ins, "a store to a kernel parameter")
            return lambda s: None  # a call sequence's parameter (device printf): not modelled, not needed
        addr = self._address(ins.args[0], ins)

        def st(s):
            base = addr(s)
            values = [r(s) for r in readers]
            for i, v in enumerate(values):
                at = base if i == 0 else np.asarray(base, np.uint64) + np.uint64(i * width)
                self._access(space, at, width, ins, True, s, values=v, count_width=width * vec if i == 0 else 0)
        return st

    def _atomic(self, ins: Instr, parts: list[str], dt):
        space = self._space(parts)
        opname = next((p for p in parts[1:] if p in ("add", "min", "max", "inc", "dec", "and", "or", "xor", "exch",
                                                     "cas")), None)
        if opname is None or dt is None or any(re.match(r"^v\d$", p) for p in parts):
            raise self._unsupported(ins)
        red = parts[0] == "red"
        a = ins.args
        addr_tok = a[0] if red else a[1]
        addr = self._address(addr_tok, ins)
        vals = [self.reader(t, dt, ins) for t in (a[1:] if red else a[2:])]
        out = None if red else self.writer(a[0], dt, ins)
        width = dt.itemsize

        def atom(s):
            n = self.T if isinstance(s, slice) else len(s)
            base = np.broadcast_to(np.asarray(addr(s), np.uint64), (n,))
            operands = [np.broadcast_to(np.asarray(v(s), dt), (n,)) for v in vals]
            old = np.zeros(n, dt)
            for mem, offs, mask in self._resolve(space, base, width, ins, True):
                if mem is self.local_mem:
                    raise self._unsupported(ins, "an atomic on local memory")
                idx = np.arange(n) if mask is None else np.flatnonzero(mask)
                o = offs[idx]
                self._check(mem, o, width, ins, True, mem.size)
                if mem is self.shared_mem:
                    self._note_shared(ins, True, s if mask is None else _narrow(s, mask, self.T), o, width)
                view = mem.views[width].view(dt)
                for j, off in zip(idx, o, strict=True):  # one lane after another, in thread order
                    k = int(off) // width
                    cur = view[k]
                    old[j] = cur
                    view[k] = _atomic_op(opname, cur, operands[0][j], operands[1][j] if len(operands) > 1 else None,
                                         dt)
            if out is not None:
                out(s, old)
        return atom

    def _note_shared(self, ins: Instr, write: bool, s, offs: np.ndarray, width: int) -> None:
        lanes = self.tid if isinstance(s, slice) else np.asarray(s)
        if len(lanes) != len(offs):
            offs = np.broadcast_to(offs, (len(lanes),))
        self._count(ins, "write" if write else "read", lanes, np.asarray(offs, np.int64), width)

    def _count(self, ins: Instr, kind: str, lanes: np.ndarray, offs: np.ndarray, width: int) -> None:
        """The warp requests of one executed shared-memory instruction (lanes that ran it together, per warp)."""
        key = id(ins)
        stat = self.banks.get(key)
        if stat is None:
            stat = self.banks[key] = SharedAccess(ins.line, kind)
        per_phase = 32 if width <= 4 else 16 if width == 8 else 8
        nwords = max(1, width // 4)
        warp = lanes // WARP
        phase = (lanes % WARP) // per_phase
        group = warp * 4 + phase  # (warp, phase)
        first_word = offs // 4
        words = (first_word[:, None] + np.arange(nwords)[None, :]).reshape(-1)
        groups = np.repeat(group, nwords)
        uniq = np.unique((groups << 32) | words)
        g_of, w_of = uniq >> 32, uniq & 0xFFFFFFFF
        bank_key = (g_of << 5) | (w_of % N_BANKS)
        bk, per_bank = np.unique(bank_key, return_counts=True)
        gk = bk >> 5
        # the degree of each (warp, phase): its busiest bank
        gu, start = np.unique(gk, return_index=True)
        degs = np.maximum.reduceat(per_bank, start)
        wu = gu // 4
        warps, wstart = np.unique(wu, return_index=True)
        req_deg = np.maximum.reduceat(degs, wstart)
        req_wave = np.add.reduceat(degs, wstart)
        stat.degree = max(stat.degree, int(req_deg.max()))
        stat.count += int((req_deg > 1).sum())
        stat.requests += len(warps)
        stat.wavefronts += int(req_wave.sum())
        # which __shared__ arrays
        lo, hi = int(offs.min()), int(offs.max()) + width
        for start_, end_, name in self.shared_ranges:
            if start_ < hi and lo < end_ and name not in stat.arrays:
                hit = ((offs < end_) & (offs + width > start_)).any()
                if hit:
                    stat.arrays.add(name)

    def _cvta(self, ins: Instr, parts: list[str]):
        space = self._space(parts)
        to = "to" in parts
        dt = _DTYPES[_types_of(parts)[-1]]
        x, out = self.reader(ins.args[1], dt, ins), self.writer(ins.args[0], dt, ins)
        if space == "global":
            return lambda s: out(s, x(s))
        tag = {"shared": SHARED_TAG, "local": LOCAL_TAG}.get(space)
        if tag is None:
            raise self._unsupported(ins)
        hi = np.uint64(tag << TAG_SHIFT)
        mask = np.uint64(OFFSET_MASK)
        if to:
            return lambda s: out(s, (np.asarray(x(s)).astype(np.uint64) & mask).astype(dt))
        return lambda s: out(s, (np.asarray(x(s)).astype(np.uint64) | hi).astype(dt))

    def _cvt(self, ins: Instr, parts: list[str]):
        types = _types_of(parts)
        if len(types) != 2:
            raise self._unsupported(ins)
        dname, sname = types
        ddt, sdt = _DTYPES[dname], _DTYPES[sname]
        mods = set(parts[1:-2])
        sat = "sat" in mods
        x = self.reader(ins.args[1], sdt, ins)
        out = self.writer(ins.args[0], ddt, ins)
        sf = sdt.kind == "f" or sname.startswith("bf16")
        df = ddt.kind == "f" or dname.startswith("bf16")
        if sname == "bf16":
            def read_bf16(s):
                return (np.asarray(x(s)).astype(np.uint32) << np.uint32(16)).view(np.float32)
            src = read_bf16
        else:
            src = x
        if sf and df:
            rnd = next((m for m in ("rni", "rzi", "rmi", "rpi") if m in mods), None)
            if dname == "bf16":
                return lambda s: out(s, _to_bf16(np.asarray(src(s), np.float32)))

            def f2f(s):
                v = np.asarray(src(s))
                if rnd:
                    v = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}[rnd](v)
                if ddt.itemsize < v.dtype.itemsize:
                    r = next((m for m in ("rz", "rm", "rp") if m in mods), "rn")
                    v = _round_f32(v.astype(np.float64), r) if r != "rn" and ddt.itemsize == 4 else v.astype(ddt)
                v = np.asarray(v).astype(ddt)
                if sat:
                    v = np.clip(np.nan_to_num(v, nan=0.0), 0, 1).astype(ddt)
                out(s, v)
            return f2f
        if sf and not df:
            rnd = next((m for m in ("rni", "rzi", "rmi", "rpi") if m in mods), "rzi")
            g = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}[rnd]
            info = np.iinfo(ddt)

            def f2i(s):
                v = g(np.asarray(src(s), np.float64))
                v = np.where(np.isnan(v), 0, np.clip(v, info.min, info.max))
                out(s, v.astype(ddt))
            return f2i
        if not sf and df:
            if dname == "bf16":
                return lambda s: out(s, _to_bf16(np.asarray(x(s)).astype(np.float32)))
            r = next((m for m in ("rz", "rm", "rp") if m in mods), "rn")
            if r != "rn" and ddt.itemsize == 4:
                return lambda s: out(s, _round_f32(np.asarray(x(s)).astype(np.float64), r))
            return lambda s: out(s, np.asarray(x(s)).astype(ddt))
        # integer to integer: the source read at its type, converted (wraps; .sat clamps)
        if sat:
            info = np.iinfo(ddt)
            return lambda s: out(s, np.clip(np.asarray(x(s)).astype(np.int64), info.min, info.max).astype(ddt))
        return lambda s: out(s, np.asarray(x(s)).astype(ddt))

    def _setp(self, ins: Instr, parts: list[str], dt):
        cmp = parts[1]
        boolop = parts[2] if parts[2] in ("and", "or", "xor") else None
        a = ins.args
        dsts = [t.strip() for t in a[0].split("|")]
        x, y = self.reader(a[1], dt, ins), self.reader(a[2], dt, ins)
        c = self.reader(a[3], _DTYPES["pred"], ins) if boolop else None
        outs = [self.writer(d, _DTYPES["pred"], ins) for d in dsts]
        test = _comparison(cmp, dt.kind == "f", ins, self)
        comb = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}.get(boolop)

        def setp(s):
            r = test(np.asarray(x(s)), np.asarray(y(s)))
            if comb is not None:
                cv = c(s)
                outs[0](s, comb(r, cv))
                if len(outs) > 1:
                    outs[1](s, comb(~r, cv))
            else:
                outs[0](s, r)
                if len(outs) > 1:
                    outs[1](s, ~r)
        return setp

    def _set(self, ins: Instr, parts: list[str]):
        types = _types_of(parts)
        if len(types) != 2 or parts[2] in ("and", "or", "xor"):
            raise self._unsupported(ins)
        ddt, sdt = _DTYPES[types[0]], _DTYPES[types[1]]
        x, y = self.reader(ins.args[1], sdt, ins), self.reader(ins.args[2], sdt, ins)
        out = self.writer(ins.args[0], ddt, ins)
        test = _comparison(parts[1], sdt.kind == "f", ins, self)
        true = ddt.type(1.0) if ddt.kind == "f" else np.array([-1], np.int64).astype(ddt)[0]
        return lambda s: out(s, np.where(test(np.asarray(x(s)), np.asarray(y(s))), true, ddt.type(0)))

    def _shfl(self, ins: Instr, parts: list[str]):
        if "sync" not in parts:
            raise self._unsupported(ins, "shfl without .sync")
        mode = next(p for p in parts if p in ("up", "down", "bfly", "idx"))
        a = ins.args
        dsts = [t.strip() for t in a[0].split("|")]
        src_arr = self._reg(a[1], ins) if a[1].startswith("%") else None
        src = self.reader(a[1], np.dtype(np.uint32), ins)
        b = self.reader(a[2], np.dtype(np.uint32), ins)
        c = self.reader(a[3], np.dtype(np.uint32), ins)
        out = self.writer(dsts[0], np.dtype(np.uint32), ins)
        pout = self.writer(dsts[1], _DTYPES["pred"], ins) if len(dsts) > 1 else None
        T = self.T

        def shfl(s):
            lane = self.lane[s]
            n = len(lane)
            bv = np.broadcast_to(np.asarray(b(s), np.int64), (n,)) & 0x1F
            cv = np.broadcast_to(np.asarray(c(s), np.int64), (n,))
            clamp, seg = cv & 0x1F, (cv >> 8) & 0x1F
            max_lane = (lane & seg) | (clamp & ~seg)
            min_lane = lane & seg
            if mode == "up":
                j = lane - bv
                ok = j >= max_lane
            elif mode == "down":
                j = lane + bv
                ok = j <= max_lane
            elif mode == "bfly":
                j = lane ^ bv
                ok = j <= max_lane
            else:
                j = min_lane | (bv & ~seg)
                ok = j <= max_lane
            j = np.where(ok, j, lane)
            source = self.warp[s] * WARP + j
            inside = source < T
            source = np.where(inside, source, self.tid[s])
            values = (src_arr.view(np.uint32) if src_arr is not None and src_arr.dtype.itemsize == 4
                      else np.broadcast_to(np.asarray(src(slice(None)), np.uint32), (T,)))
            got = values[source]
            out(s, got)
            if pout is not None:
                pout(s, ok & inside)
        return shfl

    def _vote(self, ins: Instr, parts: list[str]):
        if "sync" not in parts:
            raise self._unsupported(ins, "vote without .sync")
        mode = next((p for p in parts if p in ("all", "any", "uni", "ballot")), None)
        if mode is None:
            raise self._unsupported(ins)
        a = ins.args
        p = self.reader(a[1], _DTYPES["pred"], ins)
        T = self.T
        if mode == "ballot":
            out = self.writer(a[0], np.dtype(np.uint32), ins)
        else:
            out = self.writer(a[0], _DTYPES["pred"], ins)

        def vote(s):
            bits = np.zeros(T, bool)
            active = np.zeros(T, bool)
            active[s] = True
            bits[s] = p(s)
            mask = _ballot(active & bits, self.warp, self.lane, T)
            if mode == "ballot":
                out(s, mask[s])
                return
            act = _ballot(active, self.warp, self.lane, T)
            if mode == "all":
                out(s, (mask == act)[s])
            elif mode == "any":
                out(s, (mask != 0)[s])
            else:
                out(s, ((mask == act) | (mask == 0))[s])
        return vote

    def _call(self, ins: Instr):
        m = re.search(r"\b(vprintf)\b", ins.text)
        if m:
            return lambda s: None  # device printf: its output is the executor's to show
        raise self._unsupported(ins, "a call of a device function NVRTC did not inline")

    # -- running ---------------------------------------------------------------------------------------------

    def run(self) -> Launch:
        with np.errstate(all="ignore"):
            self.local_mem = _Memory(np.zeros(max(self.local_size, 16) * self.T, np.uint8), "local")
            self.local_mem.size = self.local_size * self.T
            for z in range(self.grid[2]):
                for y in range(self.grid[1]):
                    for x in range(self.grid[0]):
                        self._block((x, y, z))
        for arr, mem in zip(self.buffers, self.mems, strict=False):
            arr.reshape(-1).view(np.uint8)[:] = mem.data[: mem.size]
        return self

    def _block(self, ctaid: tuple[int, int, int]) -> None:
        for i, c in enumerate("xyz"):
            self.special[f"%ctaid.{c}"][:] = ctaid[i]
        self.shared_mem = _Memory(np.full(self.shared_size, POISON, np.uint8), "shared")
        T = self.T
        pc = np.zeros(T, np.int64)
        done = np.zeros(T, bool)
        waiting = np.zeros(T, bool)
        code, targets = self.code, self.targets
        n = len(code)
        full = slice(None)
        while True:
            runnable = ~done & ~waiting
            if not runnable.any():
                if not waiting.any():
                    return
                at = np.unique(pc[waiting])
                if len(at) > 1:
                    raise self._fault(code[int(at[0])][2], "divergent barrier: threads wait at "
                                      + " and ".join(self.where(code[int(p)][2]) for p in at[:2])
                                      + " (a __syncthreads() that not every thread reaches)")
                pc[waiting] += 1
                waiting[:] = False
                continue
            p = int(pc[runnable].min())
            grp = runnable & (pc == p)
            others = runnable & ~grp
            stop = int(pc[others].min()) if others.any() else n + 1
            s = full if grp.all() else np.flatnonzero(grp)
            while True:
                self.steps += 1
                if self.steps > STEP_LIMIT:
                    raise self._fault(code[min(p, n - 1)][2], f"more than {STEP_LIMIT:,} instruction steps: a "
                                                             "kernel that never ends?")
                if p >= n:
                    done[s] = True
                    break
                kind, fn, ins = code[p]
                if kind == 0:
                    fn(s)
                    p += 1
                    if p >= stop:
                        pc[s] = p
                        break
                    continue
                if kind == 1:  # branch
                    if fn is None:
                        p = targets[p]
                    else:
                        taken = fn(s)
                        if taken.all():
                            p = targets[p]
                        elif not taken.any():
                            p += 1
                        else:
                            idx = np.flatnonzero(grp) if isinstance(s, slice) else s
                            pc[idx[taken]] = targets[p]
                            pc[idx[~taken]] = p + 1
                            break
                    if p >= stop:
                        pc[s] = p
                        break
                    continue
                if kind == 2:  # barrier
                    pc[s] = p
                    waiting[s] = True
                    break
                # ret / exit
                if fn is None:
                    done[s] = True
                    break
                taken = fn(s)
                idx = np.flatnonzero(grp) if isinstance(s, slice) else s
                done[idx[taken]] = True
                pc[idx[~taken]] = p + 1
                break


def _narrow(s, p: np.ndarray, T: int) -> np.ndarray:
    if isinstance(s, slice):
        return np.flatnonzero(np.broadcast_to(p, (T,)))
    return s[np.broadcast_to(p, s.shape)]


def _ballot(flags: np.ndarray, warp: np.ndarray, lane: np.ndarray, T: int) -> np.ndarray:
    """Per thread: the 32-bit mask of its warp's lanes whose flag is set."""
    bits = np.where(flags, np.left_shift(np.uint64(1), lane.astype(np.uint64)), np.uint64(0))
    per_warp = np.zeros(int(warp.max()) + 1, np.uint64)
    np.bitwise_or.at(per_warp, warp, bits)
    return per_warp[warp].astype(np.uint32)


def _shift(x: np.ndarray, k: np.ndarray, bits: int, *, left: bool, signed: bool = False) -> np.ndarray:
    kk = np.minimum(k.astype(np.int64), bits)
    big = kk >= bits
    safe = np.where(big, 0, kk).astype(x.dtype if x.dtype.kind == "u" else _RAW[x.dtype.itemsize])
    if left:
        r = x.view(_RAW[x.dtype.itemsize]) << safe if x.dtype.kind != "u" else x << safe
        r = np.where(big, 0, r)
        return np.asarray(r).astype(_RAW[x.dtype.itemsize]).view(x.dtype) if x.dtype.kind == "i" else r
    if signed:
        v = x.view(_SIGNED[x.dtype.itemsize]) if x.dtype.kind != "i" else x
        r = np.where(big, np.where(v < 0, -1, 0), v >> safe.astype(v.dtype))
        return np.asarray(r).astype(v.dtype)
    v = x.view(_RAW[x.dtype.itemsize]) if x.dtype.kind != "u" else x
    r = np.where(big, 0, v >> safe)
    return np.asarray(r).astype(v.dtype)


def _int_div(x: np.ndarray, y: np.ndarray, dt: np.dtype) -> np.ndarray:
    if dt.kind == "u":
        return np.where(y == 0, np.iinfo(dt).max, x // np.where(y == 0, 1, y)).astype(dt)
    x64, y64 = x.astype(np.int64), y.astype(np.int64)
    safe = np.where(y64 == 0, 1, y64)
    q = np.abs(x64) // np.abs(safe) * np.sign(x64) * np.sign(safe)
    return np.where(y64 == 0, -1, q).astype(dt)


def _int_rem(x: np.ndarray, y: np.ndarray, dt: np.dtype) -> np.ndarray:
    if dt.kind == "u":
        return np.where(y == 0, x, x % np.where(y == 0, 1, y)).astype(dt)
    q = _int_div(x, y, dt).astype(np.int64)
    return np.where(y == 0, x, x.astype(np.int64) - q * y.astype(np.int64)).astype(dt)


def _round_f32(v: np.ndarray, mode: str) -> np.ndarray:
    """float64 values to float32 with a directed rounding (``rz``, ``rm``, ``rp``; ``rn`` the default)."""
    v = np.asarray(v, np.float64)
    r = v.astype(np.float32)
    if mode == "rn":
        return r
    back = r.astype(np.float64)
    if mode == "rm":
        fix = back > v
        return np.where(fix, np.nextafter(r, np.float32(-np.inf)), r).astype(np.float32)
    if mode == "rp":
        fix = back < v
        return np.where(fix, np.nextafter(r, np.float32(np.inf)), r).astype(np.float32)
    fix = np.abs(back) > np.abs(v)
    return np.where(fix, np.nextafter(r, np.float32(0)), r).astype(np.float32)


def _to_bf16(v: np.ndarray) -> np.ndarray:
    bits = np.asarray(v, np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    nan = np.isnan(v)
    return np.where(nan, 0x7FC0, rounded).astype(np.uint16)


def _comparison(cmp: str, is_float: bool, ins: Instr, launch: Launch):
    base = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
            "ge": np.greater_equal, "lo": np.less, "ls": np.less_equal, "hi": np.greater, "hs": np.greater_equal}
    if cmp in base:
        g = base[cmp]
        if is_float and cmp == "ne":
            return lambda x, y: (x != y) & ~np.isnan(x) & ~np.isnan(y)
        return g
    if is_float and cmp.endswith("u") and cmp[:-1] in base:
        g = base[cmp[:-1]]
        return lambda x, y: g(x, y) | np.isnan(x) | np.isnan(y)
    if is_float and cmp == "num":
        return lambda x, y: ~np.isnan(x) & ~np.isnan(y)
    if is_float and cmp == "nan":
        return lambda x, y: np.isnan(x) | np.isnan(y)
    raise launch._unsupported(ins, f"comparison {cmp}")


def _atomic_op(op: str, cur, x, y, dt):
    if op == "add":
        return (np.asarray(cur) + x).astype(dt)
    if op == "min":
        return np.fmin(cur, x) if dt.kind == "f" else min(cur, x)
    if op == "max":
        return np.fmax(cur, x) if dt.kind == "f" else max(cur, x)
    if op == "exch":
        return x
    if op == "cas":
        return y if cur == x else cur
    if op == "and":
        return cur & x
    if op == "or":
        return cur | x
    if op == "xor":
        return cur ^ x
    if op == "inc":
        return dt.type(0) if cur >= x else dt.type(cur + 1)
    if op == "dec":
        return x if (cur == 0 or cur > x) else dt.type(cur - 1)
    raise ValueError(op)


# ---- the count ---------------------------------------------------------------------------------------------


@dataclass
class Counted:
    """One interpreted launch: the bank statistics per PTX instruction, and the argument buffers it wrote."""

    stats: list[SharedAccess]
    buffers: list[np.ndarray]
    steps: int


def interpret(ptx: str, label: str, name: str, grid: Sequence[int], block: Sequence[int], args: Sequence[object],
              *, shared_bytes: int = 0) -> Counted:
    """Interpret one launch of kernel ``name`` of ``ptx`` (NVRTC's, with line info) on copies of ``args`` (NumPy
    arrays, ints, floats); returns the bank statistics and the written copies of the array arguments."""
    module = parse(ptx, label)
    copies = [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args]
    launch = Launch(module, name, grid, block, copies, shared_bytes=shared_bytes, label=label).run()
    return Counted(list(launch.banks.values()), launch.buffers, launch.steps)


def bank_conflicts(ptx: str, label: str, text: str, name: str, grid: Sequence[int], block: Sequence[int],
                   args: Sequence[object], *, shared_bytes: int = 0):
    """The shared-memory bank conflicts of one interpreted launch, per source line, kind and ``__shared__`` array
    (:class:`grader.instrument.cuda_cpu.BankConflicts`, the executor's format), and the written copies of the array
    arguments (for the caller to hold against the executor's result)."""
    from grader.instrument.cuda_cpu import BankConflicts, LineConflicts

    counted = interpret(ptx, label, name, grid, block, args, shared_bytes=shared_bytes)
    lines = text.splitlines()
    merged: dict[tuple[int, str, tuple[str, ...]], list[int]] = {}
    for st in counted.stats:
        if not st.requests:
            continue
        key = (st.line, st.kind, tuple(sorted(st.arrays)))
        m = merged.setdefault(key, [0, 0, 0, 0])
        m[0] = max(m[0], st.degree)
        m[1] += st.count
        m[2] += st.requests
        m[3] += st.wavefronts
    rows = [LineConflicts(line, kind, d, c, r, w, arrays, lines[line - 1].strip() if 0 < line <= len(lines) else "")
            for (line, kind, arrays), (d, c, r, w) in sorted(merged.items())]
    return BankConflicts(name, rows), counted.buffers


ROUNDING = 1e-3  # how far the interpreted launch's float outputs may be from the executor's (FMA contraction, exp2)


def first_difference(ours: Sequence[np.ndarray], theirs: Sequence[np.ndarray]) -> tuple[int, int] | None:
    """(buffer, flat index) of the first element where two launches' outputs differ beyond float rounding (integers
    exactly; floats with the same NaNs and infinities and within ROUNDING of the larger magnitude, or of a thousandth
    of the buffer's largest), or None."""
    for b, (x, y) in enumerate(zip(ours, theirs, strict=True)):
        x, y = np.asarray(x).reshape(-1), np.asarray(y).reshape(-1)
        if x.dtype.kind != "f":
            bad = np.flatnonzero(x != y)
        else:
            a, c = x.astype(np.float64), y.astype(np.float64)
            fa, fc = np.isfinite(a), np.isfinite(c)
            scale = max(float(np.abs(a[fa]).max(initial=0.0)), float(np.abs(c[fc]).max(initial=0.0)))
            same_special = (fa == fc) & (fa | (a == c) | (np.isnan(a) & np.isnan(c)))
            with np.errstate(invalid="ignore"):  # inf - inf: decided by same_special, not here
                close = ~(fa & fc) | (np.abs(a - c) <= ROUNDING * (np.maximum(np.abs(a), np.abs(c)) + 1e-3 * scale))
            bad = np.flatnonzero(~(same_special & close))
        if bad.size:
            return b, int(bad[0])
    return None
