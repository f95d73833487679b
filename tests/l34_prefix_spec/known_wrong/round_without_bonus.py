"""Classic bug: a round whose γ drafts are all accepted emits only γ tokens, wasting the target's last position."""

MODULE = "spec_decode"
REJECTED_BY = {"speculative_round": ["correctness"]}

_round = speculative_round


def speculative_round(target, draft, draft_tokens, u, u_resample):
    out = _round(target, draft, draft_tokens, u, u_resample)
    return out[: len(draft_tokens)] if len(out) == len(draft_tokens) + 1 else out
