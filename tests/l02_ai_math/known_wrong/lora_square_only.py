"""Classic bug: 2 · r · d_in, as if every adapted weight were square (d_out ignored)."""

MODULE = "ai_math"
REJECTED_BY = {"lora_params": ["correctness"]}

_correct_lora = lora_params


def lora_params(d_in, d_out, rank):
    _correct_lora(d_in, d_out, rank)  # same argument checks
    return 2 * rank * d_in
