"""Classic bug: no argument checks: a wrong context_len, a duplicate request or an empty prompt are accepted."""

MODULE = "engine"
REJECTED_BY = {"paged_attention": ["correctness"], "PagedEngine": ["correctness"]}

_correct_attention = paged_attention


def paged_attention(q, k_cache, v_cache, block_table, context_len, q_start):
    return _correct_attention(q, k_cache, v_cache, block_table, q_start + int(q.shape[0]), q_start)


def _add_unchecked(self, req_id, prompt, max_new_tokens):
    self.requests[req_id] = _Request(req_id, list(prompt), max_new_tokens)
    self.arrivals.append(req_id)


PagedEngine.add_request = _add_unchecked
