"""Classic bug: overlapped work adds up the two sides (the serial time) instead of taking the slower one."""

MODULE = "movement"
REJECTED_BY = {"overlap_time": ["correctness"]}


def overlap_time(t_comp, t_comm, k_comp=1.0, k_comm=1.0):
    tc, tm = _check_real("t_comp", t_comp), _check_real("t_comm", t_comm)
    kc, km = _check_real("k_comp", k_comp, minimum=1.0), _check_real("k_comm", k_comm, minimum=1.0)
    return kc * tc + km * tm
