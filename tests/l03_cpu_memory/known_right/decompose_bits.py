"""Another correct decomposition: shifts and masks (line_bytes and n_sets are powers of two)."""

MODULE = "cpu_memory"
ACCEPTED = ["cache_decompose"]


def cache_decompose(addr, line_bytes=64, n_sets=64):
    a = check_int("addr", addr)
    line, sets = _check_pow2("line_bytes", line_bytes), _check_pow2("n_sets", n_sets)
    off_bits, set_bits = line.bit_length() - 1, sets.bit_length() - 1
    return a >> (off_bits + set_bits), (a >> off_bits) & (sets - 1), a & (line - 1)
