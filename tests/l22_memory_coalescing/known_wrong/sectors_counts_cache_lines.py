"""Unit slip: counts 128-byte cache lines instead of 32-byte sectors (stride 1 → 1, stride 8 → 8)."""

MODULE = "ledger"
REJECTED_BY = {"warp_sectors": ["correctness"]}

SECTOR_BYTES = 128
