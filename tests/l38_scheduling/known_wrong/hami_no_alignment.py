"""Charges the bytes asked for, not HAMi's 2 MiB granules: 511 one-byte allocations cost 511 B."""

MODULE = "scheduling"
REJECTED_BY = {"hami_memory": ["correctness"]}

HAMI_ALIGN = 1
