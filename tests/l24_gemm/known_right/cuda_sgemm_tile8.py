"""Correct alternative: 8 × 8 tiles (64-thread blocks), graded against the ledger of its own tile."""

MODULE = "cuda_sgemm"
ACCEPTED = ["sgemm_tiled"]

TILE = 8
