"""No argument checks: right answers on valid input, but split TP groups, unsorted logs and bad sizes not refused."""

MODULE = "platform"
REJECTED_BY = {
    "place_gang": ["correctness"],
    "frag_metrics": ["correctness"],
    "self_heal": ["correctness"],
    "rfc_sizing": ["correctness"],
}


def check_int(name, value, minimum=0):
    return value


def _check_free(free_per_node, gpus_per_node=None):
    return list(free_per_node)


def _check_real(name, x, *, positive=False, below_one=False):
    return Fraction(str(x))


def _check_events(events):
    return [tuple(e) for e in events]
