"""Attack: sleep forever inside merge_online_states (no CPU used: only a wall clock stops it)."""

ZERO = ["merge_online_states"]


def merge_online_states(a, b):
    import time  # here, not at module level (R3.3)

    while True:
        time.sleep(3600)
