"""The tiled ledger: the one rule every efficiency test of a tiled kernel holds its counted loads to.

A tiled kernel handles its tail tiles one of two standard ways, and both are correct:

* it **masks** the lanes past the edge: they move nothing, and the kernel loads exactly what the
  ledger's formula gives on the true dimensions (the *masked* ledger);
* it **pads** them: wraps their offsets back inside the tensor (``offs % M``, as Triton's matmul
  tutorial does), clamps them, or loads a whole block: those lanes load real, in-bounds elements
  it then discards, and the kernel loads at most what the same formula gives on the dimensions
  rounded up to the blocks (the *padded* ledger).

So a kernel is held between the two. Loads above the masked ledger and within the padded one are
the tail idiom: a note (``loads padding``), never a loss. Above the padded ledger, the kernel
**re-loads a slice** it already had (reuse lost: a k-step's slice loaded twice, A read once per
output element), and fails. The total alone would let a kernel hide a re-load in the slack of the
tail tiles when the blocks are large against the matrix; so, when the launch has one program per
tile, each program is also held to one padded tile (``padded / tiles``): a full tile that loads
its A slice twice fails there, by far. A lane **outside the tensor** is a bounds bug: the traffic
counter raises :class:`~grader.instrument.traffic.KernelMemoryError` before anything is counted.

Below the masked ledger, something was never loaded (a dropped ragged k-step): it fails too.

The blocks the padded ledger rounds up to are the learner's (its defaults, or what the test passes), so
they are **bounded by the unit's contract**: :meth:`TiledLedger.of` takes ``bounds``, the largest block
the contract allows per padded dimension, from the test, and a block above it (or not a positive int)
is refused (:class:`TrafficMismatch`, "above the contract's largest block"): a huge declared default
gains no slack. And padding is granted only on the blocks the kernel launched with: when the ledger
knows its tiles (one program per tile) and the launch ran another number of programs, the declared
blocks are not the launched ones and the kernel is held to the masked ledger (no padding). Counted
loads include atomics (:mod:`grader.instrument.traffic` counts an atomic as a load and a store), so data
moved through atomics is held by the same rule.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass


class TrafficMismatch(AssertionError):
    """Counted traffic outside what the ledger allows (the plugin files it as a traffic failure)."""

    failure_kind = "traffic"


def round_up(value: int, block: int) -> int:
    """``value`` rounded up to a multiple of ``block`` (the padded extent of a tiled dimension)."""
    return math.ceil(value / block) * block


@dataclass(frozen=True)
class TiledLedger:
    """The loads a tiled kernel may make: ``masked`` (the formula on the true dimensions) up to ``padded``
    (the same formula on the tiled dimensions rounded up to their blocks), ``tiles`` tiles of it."""

    name: str  # "the tiled ledger"
    basis: str  # how the formula reads, for the messages: "A read ceil(n/block_n) = 3×, ..."
    masked: int
    padded: int
    tiles: int | None = None  # one program per tile: each is held to padded / tiles
    fewest: int | None = None  # a ledger that allows up to ``masked`` (two passes): the least a kernel loads
    refused: str | None = None  # a block outside the contract's bounds: assert_tiled_loads fails with this

    @classmethod
    def of(cls, formula: Callable[..., int], dims: Mapping[str, int], blocks: Mapping[str, int | None], *,
           bounds: Mapping[str, int], name: str, basis: str, tiles: int | None = None,
           fewest: int | None = None) -> TiledLedger:
        """The formula (keyword arguments ``dims``) on the true dims and on those named in ``blocks`` rounded up.

        ``bounds``: the largest block the unit's contract allows for each dim of ``blocks`` (from the test,
        never from the learner). A block above its bound, or not a positive int, is refused: the ledger
        holds the kernel to the masked ledger and :func:`assert_tiled_loads` fails, naming the block."""
        unbounded = sorted(d for d, b in blocks.items() if b is not None and d not in bounds)
        if unbounded:
            raise ValueError(f"{name}: no contract bound for the blocks of {unbounded}: pass bounds= (the largest "
                             "block the unit's contract allows per dim), never trust the learner's blocks alone")
        bad = {d: b for d, b in blocks.items() if b is not None
               and (isinstance(b, bool) or not isinstance(b, int) or not 1 <= b <= bounds[d])}
        if bad:
            said = ", ".join(f"{d}: {b!r}" for d, b in bad.items())
            most = ", ".join(f"{d}: {bounds[d]}" for d in bad)
            refused = (f"the blocks {{{said}}} are outside the unit's contract (a block is a positive int, at most "
                       f"{{{most}}}): the ledger is computed on the blocks you launch with, within the contract; "
                       "declare those")
            masked = int(formula(**dims))
            return cls(name, basis, masked, masked, tiles, fewest, refused)
        padded = {d: round_up(v, blocks[d]) if blocks.get(d) else v for d, v in dims.items()}
        return cls(name, basis, int(formula(**dims)), int(formula(**padded)), tiles, fewest)

    @property
    def per_tile(self) -> int | None:
        return self.padded // self.tiles if self.tiles else None


def assert_tiled_loads(traffic, ledger: TiledLedger, what: str) -> str | None:
    """Hold the counted loads of ``traffic`` (a :class:`~grader.instrument.traffic.Traffic`) between the masked and
    the padded ledger, and each program to one padded tile; returns the padding note, or None when exact.

    Records the note with the traffic of the test (``grader report``); raises :class:`TrafficMismatch`
    naming the case: "re-loads a slice" (above the padded ledger, or one program above a padded tile),
    or "never loaded" (below the masked ledger); a ledger whose blocks the contract refused fails first.

    The loads are ``traffic.bytes_loaded``, atomics included. Padding is allowed only when the launch ran one
    program per tile of the declared blocks (or the ledger does not know its tiles): another count of programs
    means the kernel launched with other blocks, and it is held to the masked ledger."""
    if ledger.refused:
        raise TrafficMismatch(f"{what}: {ledger.name}: {ledger.refused}")
    got, lo, hi = traffic.bytes_loaded, ledger.masked, ledger.padded
    other_grid = ledger.tiles is not None and traffic.programs != ledger.tiles and hi > lo
    if other_grid and got > lo:
        raise TrafficMismatch(
            f"{what}: loaded {got:,} B, {ledger.name} says {lo:,} B ({ledger.basis}); the launch ran "
            f"{traffic.programs} programs where your blocks make {ledger.tiles} tiles, so the kernel did not launch "
            "with the blocks it declares, and no tail padding is allowed on them: load each slice once per tile "
            "(mask the tail tiles), and launch with the blocks you declare")
    least = lo if ledger.fewest is None else ledger.fewest
    says = f"{lo:,} B" if least == lo else f"{least:,} to {lo:,} B"
    where = f"{what}: loaded {got:,} B, {ledger.name} says {says} ({ledger.basis})"
    if got < least:
        raise TrafficMismatch(f"{where}: some of the inputs were never loaded: every tile and every step, the "
                              "ragged last one too, must read its slice")
    if got > hi:
        padded = f", {hi:,} B with the tail tiles padded to the blocks" if hi > lo else ""
        raise TrafficMismatch(f"{where}{padded}: the kernel re-loads "
                              f"a slice it already had ({got / lo:.2f}× the ledger): reuse is lost; load each "
                              "slice once per tile and keep it on chip")
    _check_per_program(traffic, ledger, where)
    if got <= lo:
        return None
    note = (f"{where}: loads padding: {got - lo:,} B of tail-tile lanes wrapped or padded inside the tensors, "
            f"within the padded ledger ({hi:,} B): accepted, no points lost (masking them would save those bytes)")
    from grader.instrument import traffic as counter

    counter.note_last_count(note)
    return note


def _check_per_program(traffic, ledger: TiledLedger, where: str) -> None:
    one = ledger.per_tile
    if one is None or traffic.programs != ledger.tiles or traffic.max_program_loaded <= one:
        return
    raise TrafficMismatch(
        f"{where}: one program loaded {traffic.max_program_loaded:,} B, but a tile, padded to the blocks, "
        f"needs at most {one:,} B ({ledger.tiles} programs for {ledger.tiles} tiles): the kernel re-loads a "
        "slice it already had: reuse is lost; load each slice once per tile and keep it on chip"
    )
