"""Classic bug: the token budget counted per sequence: each request gets up to token_budget tokens in a step."""

MODULE = "engine"
REJECTED_BY = {"PagedEngine": ["correctness"]}

_correct_schedule = PagedEngine._schedule


def _schedule_per_sequence(self):
    budget = self.token_budget
    self.token_budget = budget * max(1, len(self.requests))
    try:
        return _correct_schedule(self)
    finally:
        self.token_budget = budget


PagedEngine._schedule = _schedule_per_sequence
