"""Attack: sleep forever inside merge_online_states (no CPU used: only a wall clock stops it)."""

import time

ZERO = ["merge_online_states"]


def merge_online_states(a, b):
    while True:
        time.sleep(3600)
