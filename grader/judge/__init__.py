"""Layer 2, the judge: what decides a grade from what the instruments report.

The pytest plugin (``plugin``), the loading layer tests call learner code through (``harness``), tiers and points
(``marks``), the static audit of learner files (``audit``), performance scoring (``perf``) and the wire check of
ranks' traffic (``wire``).
"""
