"""Classic bug: the simulator trusts its arguments: a float prompt length, accepted drafts above γ, a budget too
small for a decode round."""

MODULE = "tokengen"
REJECTED_BY = {"simulate_generation": ["correctness"]}

_CorrectSim = TokenGenSim


def simulate_generation(requests, token_budget, max_num_seqs, num_blocks, block_size, *, chunked_prefill=True,
                        spec_gamma=0, spec_accepted=(0,), t_fixed_s=0.0, t_token_s=0.0, t_draft_s=0.0,
                        max_steps=100_000):
    try:
        return _CorrectSim(requests, token_budget, max_num_seqs, num_blocks, block_size,
                           chunked_prefill=chunked_prefill, spec_gamma=spec_gamma, spec_accepted=spec_accepted,
                           t_fixed_s=t_fixed_s, t_token_s=t_token_s, t_draft_s=t_draft_s, max_steps=max_steps).run()
    except ValueError:
        return {"steps": [], "requests": []}
