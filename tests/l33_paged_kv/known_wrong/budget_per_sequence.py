"""Classic bug: the token budget counted per sequence: every request gets min(left, budget), a step runs over budget."""

MODULE = "paged"
REJECTED_BY = {"schedule_continuous": ["correctness"]}

_correct_schedule = schedule_continuous


def schedule_continuous(requests, token_budget, max_num_seqs, num_blocks, block_size, max_steps=100_000):
    # each request is simulated as if it had the whole budget to itself (a per-sequence chunk size)
    big = token_budget * max(1, len(requests))
    return _correct_schedule(requests, big, max_num_seqs, num_blocks, block_size, max_steps)
