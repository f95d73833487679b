"""L34 · Prefix caching: chained block hashes and a block pool with reference counts and LRU eviction.

Lecture 34 (06_LLM推理系统与性能工程/34_vLLM系统架构剖析与高阶加速技术.md) §1.2, §2.2 and §2.3: a
request whose prompt starts like an earlier one reuses that prompt's KV blocks instead of computing
them again. The KV of a token depends on every token before it, so a full block is keyed by a hash
CHAINED through all the blocks before it: the same 16 tokens at another position are another block.

* ``block_hashes`` keys each FULL block: h_i = SHA-256(h_{i−1} ‖ block i's tokens as 4-byte
  little-endian unsigned ints), h_{−1} = 32 zero bytes (a canonical stand-in for vLLM's
  ``hash_block_tokens``, which hashes the parent's hash with the block's tokens). A partial last
  block has no hash: its KV is still growing.
* ``PrefixCache`` is a pool of ``num_blocks`` blocks. A block in use has a reference count > 0 and is
  never evicted. A block whose count falls to 0 keeps its KV and its hash and waits in a free queue
  in least-recently-used order (front = evicted first); a new request that hits it takes it back.

Conventions: tokens are ints in [0, 2**32); block ids are 0 … num_blocks − 1; invalid arguments raise
ValueError naming the argument; running out of blocks raises ``NoFreeBlocks`` and changes nothing.
"""

from __future__ import annotations

import hashlib
import struct
from collections import OrderedDict
from collections.abc import Sequence

# check_int(name, value, minimum=0) -> int: value as an exact int >= minimum, else ValueError naming name
from grader.validate import check_int

ROOT_HASH = bytes(32)  # h_{−1}: the parent of a prompt's first block


class NoFreeBlocks(RuntimeError):
    """The pool cannot hold the request: too few free blocks (nothing was changed)."""


def check_tokens(tokens: object, *, empty_ok: bool = True) -> list[int]:
    """``tokens`` as a list of ints in [0, 2**32), or ValueError naming ``tokens``."""
    if isinstance(tokens, str | bytes) or not isinstance(tokens, Sequence | range):
        raise ValueError(f"tokens must be a sequence of token ids (ints), got {type(tokens).__name__}")
    out = list(tokens)
    for t in out:
        if isinstance(t, bool) or not isinstance(t, int) or not 0 <= t < 2**32:
            raise ValueError(f"tokens must hold ints in [0, 2**32), got {t!r}")
    if not out and not empty_ok:
        raise ValueError("tokens must not be empty: a request has at least one prompt token")
    return out


def block_hashes(tokens: Sequence[int], block_size: int) -> list[str]:
    """Hex SHA-256 of each FULL block of ``tokens``, each chained through its parent block's hash.

    h_i = sha256(h_{i−1} + struct.pack("<{B}I", *block_i)).digest(), h_{−1} = 32 zero bytes; the
    list holds h_i.hex() for the len(tokens) // block_size full blocks. Worked:
    block_hashes(range(40), 16) has 2 hashes, the first "aa330374288acbdc…". In the course's system
    prompt [1001 + i % 50 for i in range(800)], blocks 0 and 25 hold the same 16 tokens (50 tokens
    repeat every 400) but get different hashes: their prefixes differ.
    """
    size = check_int("block_size", block_size, 1)
    toks = check_tokens(tokens)
    # TODO: hash each full block with its parent's digest (raw 32 bytes, not hex) in front of its tokens.
    raise NotImplementedError("TODO: hash each full block with its parent's digest (raw 32 bytes, not hex) in front of its tokens.")


class PrefixCache:
    """A KV block pool with a prefix cache: reference counts, a hash → block map, LRU eviction.

    The state (given): ``free_queue`` (an OrderedDict used as a queue of block ids, front = least
    recently used, initially 0 … n−1), ``refs`` (a count per block), ``hash_of`` (block → the hash of
    the full block it holds), ``block_of`` (hash → block), ``tables`` (req_id → its block table) and
    the counters ``query_tokens``, ``hit_tokens``, ``evictions``.

    allocate(req_id, tokens) → the number of prompt tokens served from the cache:
      1. hits = the longest run of the prompt's full blocks, from the first, whose hashes are cached,
         at most (len(tokens) − 1) // block_size blocks: the last prompt token is always computed
         (its logits give the first output token), so an identical prompt re-sent still computes
         its last block;
      2. the prompt needs ceil(len / block_size) blocks; the others come from the FRONT of the free
         queue. If the queue, minus the hit blocks it holds (they are taken back, not consumed), is
         too short: raise NoFreeBlocks and change nothing;
      3. hit blocks leave the free queue if they were in it; every hit gets ref + 1;
      4. each popped block drops the hash it held (block_of and hash_of; evictions += 1), ref = 1;
      5. the prompt's full blocks past the hits are registered (hash → block), unless their hash is
         already mapped (the existing mapping is kept);
      6. the table is hits + new blocks; query_tokens += len(tokens); hit_tokens += hits · block_size.
    free(req_id): its blocks from the LAST to the first, ref − 1; a block reaching 0 goes to the BACK
      of the free queue with its hash kept (so a prompt's tail is evicted before its head).
    Worked (course lab 6.1, block 16): r1 = system prompt + 5 tokens (805), r2 = system prompt + 3
    (803), r3 = r1 + 4 (809) hit 0, 800, 800 tokens: hit rate 1600 / 2417 = 0.661978, 53 blocks used.
    """

    def __init__(self, num_blocks: int, block_size: int):
        self.num_blocks = check_int("num_blocks", num_blocks, 1)
        self.block_size = check_int("block_size", block_size, 1)
        self.free_queue: OrderedDict[int, None] = OrderedDict.fromkeys(range(self.num_blocks))
        self.refs = [0] * self.num_blocks
        self.hash_of: dict[int, str] = {}
        self.block_of: dict[str, int] = {}
        self.tables: dict[int, list[int]] = {}
        self.query_tokens = 0
        self.hit_tokens = 0
        self.evictions = 0

    def num_free_blocks(self) -> int:
        """Blocks with no reference (cached or empty): the free queue's length."""
        return len(self.free_queue)

    def ref_count(self, block: int) -> int:
        """How many running requests use ``block``."""
        b = check_int("block", block)
        if b >= self.num_blocks:
            raise ValueError(f"block must be in 0..{self.num_blocks - 1}, got {b}")
        return self.refs[b]

    def block_table(self, req_id: int) -> list[int]:
        """The blocks of request ``req_id``, in token order (a copy)."""
        if req_id not in self.tables:
            raise ValueError(f"req_id {req_id!r} holds no blocks (never allocated, or freed)")
        return list(self.tables[req_id])

    def cached_blocks(self) -> dict[str, int]:
        """Every cached full block: hash → block id (a copy)."""
        return dict(self.block_of)

    def hit_rate(self) -> float:
        """Prompt tokens served from the cache over prompt tokens queried; 0.0 before any query."""
        # TODO: the two token counters, guarding the first call.
        raise NotImplementedError('TODO: the two token counters, guarding the first call.')

    def allocate(self, req_id: int, tokens: Sequence[int]) -> int:
        """Give request ``req_id`` the blocks of its prompt; return the prompt tokens served from cache."""
        check_int("req_id", req_id)
        if req_id in self.tables:
            raise ValueError(f"req_id {req_id} is already allocated: free it first")
        toks = check_tokens(tokens, empty_ok=False)
        # TODO: steps 1-6 of the class docstring (check the free queue BEFORE changing anything).
        raise NotImplementedError('TODO: steps 1-6 of the class docstring (check the free queue BEFORE changing anything).')

    def free(self, req_id: int) -> None:
        """Release request ``req_id``'s blocks, last first; unreferenced blocks join the back of the queue."""
        if req_id not in self.tables:
            raise ValueError(f"req_id {req_id!r} holds no blocks (never allocated, or freed)")
        # TODO: walk the table from its tail; a block whose count reaches 0 is appended to the free queue.
        raise NotImplementedError('TODO: walk the table from its tail; a block whose count reaches 0 is appended to the free queue.')
