"""grader.core.child: the one framework that starts, limits, waits for, kills and reaps the processes around learner
code (the batch worker, C++ extension calls, the CPU executor's launches, the gloo ranks)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grader.core import child
from grader.core.target import REPO_ROOT

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux processes (prctl, pidfd)")


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def _gone_within(pid: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _alive(pid)


def test_a_child_that_returns_data_exits_with_its_result():
    out = child.run_function(lambda: json.dumps({"x": 1}).encode(), wall_s=30, result_cap=1 << 10)
    assert out.kind == child.EXITED and out.code == 0 and json.loads(out.result) == {"x": 1}
    assert out.how() == "exit status 0" and out.returncode == 0


def test_an_exit_code_and_no_result_are_told_apart():
    out = child.run_function(lambda: os._exit(7), wall_s=30, result_cap=1 << 10)
    assert out.kind == child.NO_RESULT and out.code == 7 and out.how() == "exit status 7" and out.result == b""


def test_a_raising_function_exits_with_its_traceback_in_the_output():
    def boom() -> bytes:
        raise ValueError("the learner's bug")

    out = child.run_function(boom, wall_s=30, result_cap=1 << 10, output_cap=1 << 12)
    assert out.kind == child.NO_RESULT and out.code == child.EXIT_RAISED
    assert b"ValueError: the learner's bug" in out.output


def test_a_crash_is_named_by_its_signal():
    def crash() -> bytes:
        import ctypes
        import faulthandler

        faulthandler.disable()  # the test runner's handler would print a dump
        ctypes.string_at(0)  # SIGSEGV
        return b"never"

    out = child.run_function(crash, wall_s=30, result_cap=1 << 10)
    assert out.kind == child.SIGNALED and out.signal == "SIGSEGV" and out.how() == "killed by SIGSEGV"
    assert out.returncode == -signal.SIGSEGV


def test_a_hang_is_stopped_at_the_wall_clock_limit():
    out = child.run_function(lambda: time.sleep(600), wall_s=0.5, result_cap=1 << 10)
    assert out.kind == child.WALL and out.timed_out and out.signal == "SIGKILL"


def test_a_cpu_burner_is_stopped_at_its_cpu_limit_even_ignoring_sigxcpu():
    def burn() -> bytes:
        signal.signal(signal.SIGXCPU, signal.SIG_IGN)  # the hard limit a second later still ends it
        while True:
            pass

    out = child.run_function(burn, wall_s=120, result_cap=1 << 10, limits=child.Limits(cpu_s=1))
    assert out.kind == child.CPU and out.timed_out and out.cpu_s >= 1, out


def test_a_result_over_its_cap_is_refused_and_the_child_killed():
    out = child.run_function(lambda: b"x" * (1 << 22), wall_s=60, result_cap=1 << 16)
    assert out.kind == child.TOO_BIG and len(out.result) == 1 << 16 and out.signal == "SIGKILL"


def test_a_flood_that_never_ends_is_refused_at_the_cap():
    def pour() -> bytes:
        r = b"z" * (1 << 20)
        return r * 512  # 512 MiB: far over the cap

    out = child.run_function(pour, wall_s=60, result_cap=1 << 20)
    assert out.kind == child.TOO_BIG and len(out.result) == 1 << 20


def test_the_output_keeps_its_last_bytes():
    def chatty() -> bytes:
        for i in range(20000):
            print(f"line {i}")
        sys.stdout.flush()
        return b"ok"

    out = child.run_function(chatty, wall_s=60, result_cap=1 << 10, output_cap=100)
    assert out.kind == child.EXITED and out.result == b"ok"
    assert len(out.output) == 100 and out.output.endswith(b"line 19999\n")


def test_the_child_leads_its_own_group_and_the_group_dies_with_it(tmp_path):
    """A grandchild (a daemon the learner's code left behind) is killed with the child's group."""
    pid_file = tmp_path / "grandchild"

    def spawn() -> bytes:
        pid = os.fork()
        if pid == 0:
            time.sleep(600)
            os._exit(0)
        pid_file.write_text(str(pid))
        return json.dumps([os.getpid(), os.getpgid(0)]).encode()

    out = child.run_function(spawn, wall_s=30, result_cap=1 << 10)
    me, group = json.loads(out.result)
    assert me == group != os.getpgid(0), "the child leads a process group of its own"
    assert _gone_within(int(pid_file.read_text()), 10), "the grandchild outlived its child's group"


def test_a_hanging_child_takes_its_grandchildren_along(tmp_path):
    pid_file = tmp_path / "grandchild"

    def spawn_and_hang() -> bytes:
        pid = subprocess.Popen(["sleep", "600"]).pid
        pid_file.write_text(str(pid))
        time.sleep(600)
        return b""

    out = child.run_function(spawn_and_hang, wall_s=1.5, result_cap=1 << 10)
    assert out.kind == child.WALL
    assert _gone_within(int(pid_file.read_text()), 10)


def test_a_grandchild_holding_the_pipe_does_not_hold_the_parent(tmp_path):
    """The child answered and exited; the daemon it left keeps the result pipe open: the answer is collected at
    the child's end, not at the wall-clock limit."""

    pid_file = tmp_path / "daemon"

    def leave_a_daemon() -> bytes:
        if (pid := os.fork()) == 0:
            os.setsid()
            time.sleep(600)
            os._exit(0)
        pid_file.write_text(str(pid))
        return b"done"

    t = time.monotonic()
    try:
        out = child.run_function(leave_a_daemon, wall_s=300, result_cap=1 << 10)
        assert out.kind == child.EXITED and out.result == b"done"
        assert out.wall_s < 300 and time.monotonic() - t < 300  # not a timing: that limit is five minutes
    finally:  # the daemon left its group on purpose: ended here, or it would hold the test runner's output
        with contextlib.suppress(ProcessLookupError, ValueError, FileNotFoundError):
            os.kill(int(pid_file.read_text()), signal.SIGKILL)


def test_the_child_dies_with_its_parent(tmp_path):
    """The parent killed with SIGKILL (no handler runs): its child, spinning, ends too (PDEATHSIG)."""
    pid_file = tmp_path / "child"
    code = (f"import time\nfrom grader.core import child\n"
            f"def spin():\n    open({str(pid_file)!r}, 'w').write(str(__import__('os').getpid()))\n"
            "    while True: pass\n"
            "c = child.start(spin)\ntime.sleep(600)\n")
    parent = subprocess.Popen([sys.executable, "-c", code], cwd=REPO_ROOT, start_new_session=True,
                              env={**os.environ, "PYTHONPATH": str(REPO_ROOT)})
    try:
        deadline = time.monotonic() + 60
        while not (pid_file.exists() and pid_file.read_text()) and time.monotonic() < deadline:
            time.sleep(0.05)
        pid = int(pid_file.read_text())
        assert _alive(pid)
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        assert _gone_within(pid, 10), "the child outlived its parent"
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(parent.pid, signal.SIGKILL)


def test_a_child_whose_parent_ended_before_it_armed_exits_at_once():
    """The race: the parent ended between the fork and PR_SET_PDEATHSIG; the child sees another parent and exits."""
    out = child.run_function(lambda: child.die_with_parent(os.getppid() + 1_000_000) or b"still here",
                             wall_s=30, result_cap=1 << 10)
    assert out.kind == child.NO_RESULT and out.code == child.EXIT_ORPHAN


def test_limits_are_set_in_the_child():
    def report() -> bytes:
        import resource

        return json.dumps([resource.getrlimit(resource.RLIMIT_CORE)[0], resource.getrlimit(resource.RLIMIT_NOFILE)[0],
                           resource.getrlimit(resource.RLIMIT_AS)[0]]).encode()

    out = child.run_function(report, wall_s=30, result_cap=1 << 10,
                             limits=child.Limits(open_files=64, address_bytes=64 << 30))
    assert json.loads(out.result) == [0, 64, 64 << 30]


def test_a_program_is_execed_with_its_stdout_as_result_and_stderr_as_output():
    out = child.run_program(["/bin/sh", "-c", "echo out; echo err >&2; exit 4"], wall_s=30, result_cap=1 << 10,
                            output_cap=1 << 10)
    assert (out.kind, out.code, out.result, out.output) == (child.EXITED, 4, b"out\n", b"err\n")
    hung = child.run_program(["/bin/sh", "-c", "sleep 600"], wall_s=0.5, result_cap=1 << 10, output_cap=1 << 10)
    assert hung.kind == child.WALL
    with pytest.raises(FileNotFoundError):
        child.run_program(["/nonexistent/runner"], wall_s=30, result_cap=1 << 10, output_cap=1 << 10)


def test_a_persistent_child_is_polled_and_stopped():
    r, w = os.pipe()
    c = child.start(lambda: time.sleep(600), setup=lambda: os.close(r))
    os.close(w)
    assert c.poll() is None
    out = c.stop()
    assert out.kind == child.SIGNALED and out.signal == "SIGKILL" and c.stop() is out
    os.close(r)
    quick = child.start(lambda: os._exit(5))
    deadline = time.monotonic() + 30
    while quick.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    assert quick.outcome is not None and quick.outcome.how() == "exit status 5"


def test_frames_carry_messages_under_a_cap_and_a_deadline():
    r, w = os.pipe()
    child.write_frame(w, b"hello")
    assert child.read_frame(r, cap=10) == b"hello"
    child.write_frame(w, b"x" * 11)
    with pytest.raises(child.TooBig):
        child.read_frame(r, cap=10)
    os.close(r)
    os.close(w)
    r, w = os.pipe()
    ticks = []
    with pytest.raises(TimeoutError):
        child.read_frame(r, cap=10, deadline=time.monotonic() + 0.3, tick=lambda: ticks.append(1), tick_s=0.05)
    assert ticks
    os.close(w)
    assert child.read_frame(r, cap=10) is None
    os.close(r)
