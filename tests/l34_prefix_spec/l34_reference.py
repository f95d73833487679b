"""The grader's own prefix cache and rejection-sampling oracles for L34 (written apart from the solution)."""

from __future__ import annotations

import hashlib
from fractions import Fraction


def chained_hashes(tokens: list[int], b: int) -> list[str]:
    """h_i = sha256(h_{i−1} ‖ tokens as u32 little-endian), h_{−1} = 32 zero bytes, full blocks only."""
    out, parent = [], b"\0" * 32
    for i in range(len(tokens) // b):
        m = hashlib.sha256(parent)
        for t in tokens[i * b:(i + 1) * b]:
            m.update(t.to_bytes(4, "little"))
        parent = m.digest()
        out.append(parent.hex())
    return out


class RefCache:
    """Free queue as a plain list (front = index 0), a ref count per block, hash ↔ block maps."""

    def __init__(self, n: int, b: int) -> None:
        self.n, self.b = n, b
        self.queue = list(range(n))
        self.ref = [0] * n
        self.hash_of: dict[int, str] = {}
        self.block_of: dict[str, int] = {}
        self.tables: dict[int, list[int]] = {}
        self.query = self.hit = self.evictions = 0

    def allocate(self, req: int, tokens: list[int]) -> tuple[str, object]:
        if req in self.tables:
            return "ValueError", "req_id"
        if not tokens:
            return "ValueError", "tokens"
        hashes = chained_hashes(tokens, self.b)
        hits = []
        for h in hashes[: (len(tokens) - 1) // self.b]:
            if h not in self.block_of:
                break
            hits.append(self.block_of[h])
        need = -(-len(tokens) // self.b) - len(hits)
        if len([q for q in self.queue if q not in hits]) < need:
            return "NoFreeBlocks", None
        for blk in hits:
            if blk in self.queue:
                self.queue.remove(blk)
            self.ref[blk] += 1
        table = list(hits)
        for _ in range(need):
            blk = self.queue.pop(0)
            if blk in self.hash_of:
                del self.block_of[self.hash_of.pop(blk)]
                self.evictions += 1
            self.ref[blk] = 1
            table.append(blk)
        for i in range(len(hits), len(hashes)):
            if hashes[i] not in self.block_of:
                self.block_of[hashes[i]] = table[i]
                self.hash_of[table[i]] = hashes[i]
        self.tables[req] = table
        self.query += len(tokens)
        self.hit += len(hits) * self.b
        return "ok", len(hits) * self.b

    def free(self, req: int) -> tuple[str, object]:
        if req not in self.tables:
            return "ValueError", "req_id"
        for blk in self.tables.pop(req)[::-1]:
            self.ref[blk] -= 1
            if self.ref[blk] == 0:
                self.queue.append(blk)
        return "ok", None

    def apply(self, op: tuple) -> tuple[str, object]:
        return self.allocate(op[1], list(op[2])) if op[0] == "allocate" else self.free(op[1])

    def state(self) -> dict:
        return {"tables": {r: list(t) for r, t in self.tables.items()}, "refs": list(self.ref),
                "free": len(self.queue), "cached": dict(self.block_of),
                "counters": (self.query, self.hit, self.evictions),
                "hit_rate": self.hit / self.query if self.query else 0.0}


# ---- speculative decoding -------------------------------------------------------------------------


def overlap(p: list, q: list) -> Fraction:
    return sum((min(a, b) for a, b in zip(p, q, strict=True)), Fraction(0))


def residual(p: list, q: list) -> list[Fraction]:
    over = [max(Fraction(a) - b, Fraction(0)) for a, b in zip(p, q, strict=True)]
    return [w / sum(over) for w in over]


def pick(weights: list, u: float) -> int:
    """Inverse CDF on exact values: the smallest j with w_0 + … + w_j > u · Σw."""
    ws = [Fraction(w) for w in weights]
    bar, run = Fraction(u) * sum(ws), Fraction(0)
    for j, w in enumerate(ws):
        run += w
        if run > bar:
            return j
    raise AssertionError("no mass")


def verify(p: list, q: list, x: int, u: float, ur: float) -> tuple[bool, int]:
    if Fraction(u) < Fraction(p[x]) / Fraction(q[x]):  # u < min(1, p/q) for u < 1
        return True, x
    return False, pick([max(Fraction(a) - b, 0) for a, b in zip(p, q, strict=True)], ur)


def spec_round(target: list, draft: list, xs: list[int], us: list[float], urs: list[float]) -> list[int]:
    out = []
    for i, x in enumerate(xs):
        ok, tok = verify(target[i], draft[i], x, us[i], urs[i])
        out.append(tok)
        if not ok:
            return out
    return [*out, pick(target[len(xs)], urs[len(xs)])]
