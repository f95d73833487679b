"""Hit rate over the tokens computed instead of the tokens queried: 1600 / 817 = 196 % for the course's three
prompts."""

MODULE = "prefix_cache"
REJECTED_BY = {"PrefixCache": ["correctness"]}

_Cache = PrefixCache


class PrefixCache(_Cache):
    def hit_rate(self):
        computed = self.query_tokens - self.hit_tokens
        return self.hit_tokens / computed if computed else 0.0
