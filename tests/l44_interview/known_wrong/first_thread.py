"""Takes the first thread of the dump, whatever its name (a data-loader or watchdog thread comes first)."""

MODULE = "interview"
REJECTED_BY = {"main_thread_stack": ["correctness"], "triage_hang": ["correctness"]}


def main_thread_stack(dump):
    frames, started = [], False
    for line in _check_dump("dump", dump).splitlines():
        if THREAD_LINE.match(line):
            if started:
                break
            started = True
            continue
        m = FRAME_LINE.match(line)
        if m and started:
            frames.append((m.group(1), m.group(2), int(m.group(3))))
    if not started:
        raise ValueError("dump has no thread")
    return frames
