"""Dripstone's grading engine: target loading, tiers and points, traffic counting, reports."""
