"""L03 · The CPU memory hierarchy: cache lines and sets, LRU replacement, struct padding, NUMA affinity.

Lecture 03 (01_性能工程与系统前置/03_计算机体系结构前置_CPU存储层次_CacheLine与NUMA架构.md): memory moves
in 64-byte lines through set-associative caches. An address splits into tag | set | offset; the
set decides which few slots (ways) a line may occupy, so an access pattern whose lines all land in
the same sets evicts itself even when the cache is far from full. Layout decides the pattern:
walking a row-major matrix by columns, the padding a compiler puts between struct fields, which
NUMA node's CPUs feed a GPU.

Conventions: addresses and sizes are exact ints in bytes (``check_int``); the cache is physically
indexed, write-allocate, starts empty and replaces the least recently used line of a set. Struct
layouts follow the x86-64 System V ABI (the sizes in ``C_TYPES``). Invalid arguments raise
ValueError naming the argument.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int

# x86-64 System V: size == alignment for every scalar type.
C_TYPES = {
    "char": 1, "bool": 1, "int8": 1, "uint8": 1,
    "short": 2, "half": 2, "int16": 2,
    "int": 4, "float": 4, "int32": 4,
    "long": 8, "double": 8, "pointer": 8, "int64": 8,
}
ARRAY = re.compile(r"^\s*(\w+)\s*\[\s*(\d+)\s*\]\s*$")  # "T[n]"


# ---------------------------------------------------------------------------------------------
# Given: argument checks and the matrix walk
# ---------------------------------------------------------------------------------------------


def _check_pow2(name: str, value: object) -> int:
    """A power of two >= 1 (line sizes and set counts), or ValueError naming ``name``."""
    v = check_int(name, value, 1)
    if v & (v - 1):
        raise ValueError(f"{name} must be a power of two, got {v}")
    return v


def matrix_addresses(rows: int, cols: int, elem: int, order: str = "row", row_elems: int | None = None) -> list[int]:
    """Byte addresses of a row-major ``rows × cols`` matrix of ``elem``-byte elements, visited in ``order``.

    ``order="row"`` walks each row left to right (consecutive addresses), ``"col"`` walks each column
    top to bottom (addresses one row apart). ``row_elems`` pads each row to that many elements (the
    padding trick: 65 floats per row for a 64-wide matrix); default ``cols``. The matrix starts at 0.
    """
    rows, cols, elem = check_int("rows", rows), check_int("cols", cols), check_int("elem", elem, 1)
    pitch = cols if row_elems is None else check_int("row_elems", row_elems)
    if pitch < cols:
        raise ValueError(f"row_elems must be >= cols ({cols}), got {pitch}")
    if order == "row":
        return [(r * pitch + c) * elem for r in range(rows) for c in range(cols)]
    if order == "col":
        return [(r * pitch + c) * elem for c in range(cols) for r in range(rows)]
    raise ValueError(f"order must be 'row' or 'col', got {order!r}")


def _parse_type(ctype: object) -> tuple[int, int]:
    """(size, alignment) of a C type name or ``T[n]`` array; ValueError for anything else."""
    if not isinstance(ctype, str):
        raise ValueError(f"a type is a string such as 'int' or 'char[3]', got {ctype!r}")
    m = ARRAY.match(ctype)
    base, count = (m.group(1), int(m.group(2))) if m else (ctype.strip(), 1)
    if base not in C_TYPES:
        raise ValueError(f"unknown type {ctype!r}: known are {sorted(C_TYPES)} and arrays 'T[n]'")
    return C_TYPES[base] * count, C_TYPES[base]


def _check_fields(fields: object) -> list[tuple[str, int, int]]:
    """[(name, size, align)] for a list of (name, type) pairs; ValueError naming ``fields[i]``."""
    if isinstance(fields, str | bytes) or not isinstance(fields, Sequence):
        raise ValueError(f"fields must be a sequence of (name, type) pairs, got {fields!r}")
    out, seen = [], set()
    for i, field in enumerate(fields):
        if not (isinstance(field, tuple | list) and len(field) == 2 and isinstance(field[0], str) and field[0]):
            raise ValueError(f"fields[{i}] must be a (name, type) pair, got {field!r}")
        if field[0] in seen:
            raise ValueError(f"fields[{i}]: duplicate field name {field[0]!r}")
        try:
            size, align = _parse_type(field[1])
        except ValueError as err:
            raise ValueError(f"fields[{i}]: {err}") from None
        seen.add(field[0])
        out.append((field[0], size, align))
    return out


# ---------------------------------------------------------------------------------------------
# 1. Address decomposition
# ---------------------------------------------------------------------------------------------


def cache_decompose(addr: int, line_bytes: int = 64, n_sets: int = 64) -> tuple[int, int, int]:
    """Split a byte address into (tag, set index, offset in the line).

    offset = addr mod line_bytes; set = (addr // line_bytes) mod n_sets; tag = addr // (line_bytes·n_sets).
    With 64-B lines and 64 sets the low 6 bits are the offset and the next 6 the set:
    ``cache_decompose(0x12345)`` → (18, 13, 5); with 1024 sets → (1, 141, 5).

    Errors: ``addr`` not an int >= 0 → ValueError naming ``addr``; ``line_bytes`` or ``n_sets`` not a
    power of two → ValueError naming it.
    """
    # TODO: validate (check_int, _check_pow2), then split the address into its three fields.
    raise NotImplementedError('TODO: validate (check_int, _check_pow2), then split the address into its three fields.')


# ---------------------------------------------------------------------------------------------
# 2. A set-associative LRU cache
# ---------------------------------------------------------------------------------------------


def simulate_cache(addresses: Iterable[int], line_bytes: int = 64, n_sets: int = 64, ways: int = 8) -> dict[str, int]:
    """Run byte addresses through a cold ``n_sets × ways`` cache of ``line_bytes`` lines, LRU per set.

    Every access (read or write: write-allocate) touches the line holding its address: a hit if the
    line is in its set (it becomes the most recently used), else a miss that loads it, first evicting
    the least recently used line when the set already holds ``ways`` lines. Returns ``{"accesses",
    "hits", "misses", "evictions"}``.

    64×64 fp32 matrix through 4 KiB (64-B lines, 16 sets, 4 ways): row order 256 misses, 3840 hits,
    192 evictions; column order 4096 misses (its lines, 256 B apart, use only sets 0, 4, 8 and 12);
    rows padded to 65 floats, column order: 1091 misses.

    Errors: an address that is not an int >= 0 → ValueError naming ``addresses``; ``line_bytes`` or
    ``n_sets`` not a power of two, ``ways`` < 1 → ValueError naming it.
    """
    # TODO: validate, then keep an LRU order of tags per set and count hits, misses and evictions.
    raise NotImplementedError('TODO: validate, then keep an LRU order of tags per set and count hits, misses and evictions.')


# ---------------------------------------------------------------------------------------------
# 3. Struct layout and field order
# ---------------------------------------------------------------------------------------------


def struct_layout(fields: Sequence[tuple[str, str]]) -> dict:
    """The x86-64 layout of a C struct with ``fields`` [(name, type), ...] in declaration order.

    Each field starts at the next multiple of its alignment (an array aligns like its element); the
    struct aligns to its largest field alignment (1 if empty) and its size is rounded up to that, so
    arrays of the struct stay aligned. Returns ``{"offsets": {name: offset}, "size", "align",
    "padding"}`` (padding = size − Σ field sizes, holes and tail together).

    {char a; double b; char c} → offsets a 0, b 8, c 16, size 24, align 8, padding 14;
    {int i; char s[3]; short h; double d} → offsets 0, 4, 8, 16, size 24.

    Errors: a malformed pair, an unknown type or a duplicate name → ValueError naming ``fields[i]``.
    """
    # TODO: validate with _check_fields, then place each field at the next multiple of its alignment.
    raise NotImplementedError('TODO: validate with _check_fields, then place each field at the next multiple of its alignment.')


def best_field_order(fields: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """The fields reordered by decreasing alignment, ties kept in declaration order (a stable sort).

    Larger alignments first leave no hole between fields: {char a; double b; char c} becomes
    (b, a, c), 16 bytes instead of 24. Returns the (name, type) pairs as given.

    Errors: as :func:`struct_layout`.
    """
    # TODO: validate with _check_fields, then sort stably by decreasing alignment.
    raise NotImplementedError('TODO: validate with _check_fields, then sort stably by decreasing alignment.')


# ---------------------------------------------------------------------------------------------
# 4. NUMA: numactl --hardware and GPU affinity
# ---------------------------------------------------------------------------------------------


def parse_numactl(text: str) -> dict:
    """Parse ``numactl --hardware`` (``numactl -H``) output.

    Returns ``{"nodes": {node_id: {"cpus": [int, ...], "size_mb": int, "free_mb": int}},
    "distances": [[int, ...], ...]}``: CPUs as listed (a memory-only node has none), sizes in MB as
    printed, distances as the node distance table's rows in node order (10 = local; [] if the table
    is absent). Lines the tool may add that carry none of these (``node 0 cpus:`` with no CPUs
    is a node without CPUs, not an error) are ignored.

    Errors: ``text`` not a str, or with no ``available:`` line → ValueError naming ``text``; a
    ``node N cpus/size/free`` or distance line whose values are not integers → ValueError naming
    ``text`` and quoting the line.
    """
    # TODO: validate, find the available: line, then read the node lines and the distance table.
    raise NotImplementedError('TODO: validate, find the available: line, then read the node lines and the distance table.')


def gpu_cpu_affinity(numactl_text: str, gpu_numa: dict[str, int]) -> dict[str, list[int]]:
    """The CPUs local to each GPU: its NUMA node's CPUs, sorted.

    ``gpu_numa`` maps a GPU's PCI address to the ``numa_node`` sysfs reports for it
    (``/sys/bus/pci/devices/<addr>/numa_node``); −1 means the platform reports no affinity, and the
    GPU gets every CPU of the machine, sorted. With the two-node fixture (0–15,32–47 | 16–31,48–63),
    ``{"0000:18:00.0": 0}`` → CPUs 0..15 and 32..47.

    Errors: those of :func:`parse_numactl` (naming ``text``); ``gpu_numa`` not a dict of str → int, or a
    node that numactl does not list → ValueError naming ``gpu_numa``.
    """
    # TODO: parse, validate gpu_numa, then look up each GPU's node (all CPUs for -1).
    raise NotImplementedError("TODO: parse, validate gpu_numa, then look up each GPU's node (all CPUs for -1).")
