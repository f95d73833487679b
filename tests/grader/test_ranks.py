"""The multi-process harness (grader/instrument/ranks.py): ranks forked on gloo, results, counted calls, verdicts."""

from __future__ import annotations

import importlib.util
import mmap
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
import torch.distributed as dist

from grader.core.target import REPO_ROOT
from grader.instrument import ranks, worker
from grader.judge import wire
from grader.kit import RankFailure, run_ranks, uncounted

# ---- per-rank checks (module level: the ranks call them after the fork; batch grading pickles them by name)


def ring_shift(rank: int, world_size: int, n: int) -> dict:
    x = torch.full((n,), float(rank + 1), dtype=torch.float64)
    buf = torch.empty_like(x)
    req = dist.isend(x, (rank + 1) % world_size)
    dist.recv(buf, (rank - 1) % world_size)
    req.wait()
    with uncounted():  # the grader's reference: neither logged nor refused
        total = x.clone()
        dist.all_reduce(total)
    return {"left": buf, "total": total, "same_wrapper": dist.isend is dist.distributed_c10d.isend}


def naive_ring(rank: int, world_size: int, n: int) -> torch.Tensor:
    x, buf = torch.ones(n), torch.empty(n)
    dist.send(x, (rank + 1) % world_size)  # every rank sends first: gloo's send waits for the recv
    dist.recv(buf, (rank - 1) % world_size)
    return buf


def uses_all_reduce(rank: int, world_size: int) -> torch.Tensor:
    x = torch.ones(3)
    dist.all_reduce(x)
    return x


def uses_all_gather_into_tensor(rank: int, world_size: int) -> torch.Tensor:
    out = torch.empty(world_size)
    dist.all_gather_into_tensor(out, torch.ones(1))
    return out


_SAVED_ALL_REDUCE = dist.all_reduce  # a function object kept from before the ranks started: never wrapped


def saved_all_reduce(rank: int, world_size: int) -> torch.Tensor:
    x = torch.ones(3)
    _SAVED_ALL_REDUCE(x)
    return x


def functional_all_reduce(rank: int, world_size: int) -> torch.Tensor:
    from torch.distributed import _functional_collectives as fc

    return fc.wait_tensor(fc.all_reduce(torch.ones(3), "sum", dist.group.WORLD))


def dispatcher_all_reduce(rank: int, world_size: int) -> torch.Tensor:
    out = torch.ops._c10d_functional.all_reduce(torch.ones(3), "sum", dist.group.WORLD.group_name)
    return torch.ops._c10d_functional.wait_tensor(out)


def library_reducer(rank: int, world_size: int) -> torch.Tensor:
    """torch's own DDP: its C++ reducer all-reduces the gradients with no torch.distributed call."""
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 1))
    model(torch.ones(1, 2)).sum().backward()
    return model.module.weight.grad


def calls_learner_module(rank: int, world_size: int, name: str) -> torch.Tensor:
    return sys.modules[name].reduce_ones()


def rank1_raises(rank: int, world_size: int, *args: object) -> int:
    if rank == 1:
        raise ValueError("tensor must be 1-D")
    return rank


def rank2_dies(rank: int, world_size: int) -> int:
    if rank == world_size - 1:
        print("about to leave")
        os._exit(7)
    buf = torch.empty(1)
    dist.recv(buf, world_size - 1)
    return rank


def spins(rank: int, world_size: int) -> int:
    while True:
        pass


def batched(rank: int, world_size: int) -> torch.Tensor:
    x, buf = torch.full((4,), float(rank)), torch.empty(4)
    ops = [dist.P2POp(dist.isend, x, (rank + 1) % world_size), dist.P2POp(dist.irecv, buf, (rank - 1) % world_size)]
    for work in dist.batch_isend_irecv(ops):
        work.wait()
    return buf


def pid(rank: int, world_size: int) -> int:
    return os.getpid()


# A ring step whose log is honest, and the ways a log can disagree with the wire once the audit is got round
# (class 3 of the hostile review): bytes sent by a route the log does not see, entries for sends never made.

def logged_ring(rank: int, world_size: int, n: int) -> float:
    x, buf = torch.full((n,), float(rank)), torch.empty(n)
    req = dist.isend(x, (rank + 1) % world_size)
    dist.recv(buf, (rank - 1) % world_size)
    req.wait()
    return float(buf[0])


def hidden_send(rank: int, world_size: int, n: int) -> float:
    """The ring's logged step, then two whole tensors more through gloo unlogged (as with a wrapper switched off)."""
    got = logged_ring(rank, world_size, n)
    with uncounted():
        logged_ring(rank, world_size, n)
        logged_ring(rank, world_size, n)
    return got


def hidden_store(rank: int, world_size: int, n: int) -> float:
    """The values through a TCPStore of one's own (a master gather), and a ring-shaped dummy step for the log."""
    store = dist.TCPStore("127.0.0.1", 29791, world_size, is_master=rank == 0)
    store.set(f"x{rank}", torch.full((n,), float(rank)).numpy().tobytes())
    got = [store.get(f"x{r}") for r in range(world_size)]
    logged_ring(rank, world_size, n)
    return float(len(got))


def logged_collectives(rank: int, world_size: int, n: int) -> float:
    x = torch.full((n,), float(rank))
    dist.all_reduce(x)
    out = torch.empty(world_size * n)
    dist.all_gather_into_tensor(out, x)
    shard = torch.empty(n // world_size)
    dist.reduce_scatter_tensor(shard, out[:n].clone())
    return float(x[0])


def hidden_all_reduce(rank: int, world_size: int, n: int) -> float:
    """The logged collectives, and an all-reduce as large again that no log shows."""
    got = logged_collectives(rank, world_size, n)
    with uncounted():
        dist.all_reduce(torch.ones(2 * n))
    return got


def invented_sends(rank: int, world_size: int, n: int) -> float:
    """Log entries for sends that were never made (as a forged log would claim the ring's bytes)."""
    from grader.instrument import ranks

    ranks._CHILD.log.extend([("isend", 4 * n)] * 4)
    return 0.0


# ---- the rank's box: every way around torch.distributed a rank could take, tried at run time (no audit here)

_SHARED_PAGE = mmap.mmap(-1, 4096)  # MAP_SHARED, made before the ranks fork: inherited by every rank


def _barrier(rank: int, world_size: int) -> None:
    """A counted ring step: every rank has passed the line before it once this returns."""
    buf = torch.empty(1)
    req = dist.isend(torch.ones(1), (rank + 1) % world_size)
    dist.recv(buf, (rank - 1) % world_size)
    req.wait()


def box_state(rank: int, world_size: int, inherited: int = -1) -> dict:
    """What the rank's box holds: its files are private, its filter on; the ranks' folder is not visible."""
    from grader.instrument import ranks

    mine = f"/tmp/dripstone-box-test-{os.getppid()}-{rank}"
    os.mkdir(mine)  # allowed: a folder in the rank's own /tmp
    _barrier(rank, world_size)
    other = f"/tmp/dripstone-box-test-{os.getppid()}-{1 - rank}"
    try:
        os.mkdir(f"{REPO_ROOT}/dripstone-box-test")
        read_only = False
    except OSError as exc:
        read_only = exc.errno == 30  # EROFS
    pids = sorted(int(n) for n in os.listdir("/proc") if n.isdigit())
    return {"box": ranks._CHILD.box, "proc": ranks._CHILD.proc, "pids": pids, "self": int(os.readlink("/proc/self")),
            "status": open("/proc/self/status").read().count("Threads"), "mine": os.path.isdir(mine),
            "other": os.path.exists(other),
            "read_only": read_only, "tmp": sorted(os.listdir("/tmp")), "pipe": _is_pipe(inherited)}


def _is_pipe(fd: int) -> bool:
    import stat

    try:
        return stat.S_ISFIFO(os.fstat(fd).st_mode)
    except OSError:
        return False


def writes_a_file(rank: int, world_size: int) -> str:
    with open(f"/tmp/dripstone-box-{rank}", "w") as f:
        f.write("x")
    return "wrote"


def writes_a_file_and_hides_the_error(rank: int, world_size: int) -> str:
    try:
        writes_a_file(rank, world_size)
    except OSError:
        return "caught"
    return "wrote"


def forks(rank: int, world_size: int) -> int:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    return pid


def runs_a_shell(rank: int, world_size: int) -> int:
    return os.system("true")


def makes_a_link(rank: int, world_size: int) -> str:
    os.symlink("data", f"/tmp/dripstone-box-link-{rank}")
    return "linked"


def signals_the_parent(rank: int, world_size: int) -> str:
    os.kill(os.getppid(), 0)
    return "signalled"


def locks_a_file(rank: int, world_size: int) -> str:
    import fcntl

    with open("/etc/hostname") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
    return "locked"


def opens_a_unix_socket(rank: int, world_size: int) -> str:
    import socket

    try:
        socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    except OSError as exc:
        return f"refused: {exc.errno}"
    return "opened"


def listens_on_a_port(rank: int, world_size: int) -> str:
    import socket

    with socket.socket() as s:  # a port held is seen by every rank (EADDRINUSE) with no byte on the wire
        s.bind(("127.0.0.1", 0))
    return "bound"


def writes_shared_memory(rank: int, world_size: int) -> str:
    _SHARED_PAGE[rank] = 1
    return "written"


def reads_shared_memory(rank: int, world_size: int) -> int:
    return _SHARED_PAGE[0]


def my_seed(rank: int, world_size: int) -> int:
    from grader.kit import rank_seed

    return rank_seed()


# ---- tests


@pytest.mark.parametrize("world_size", [2, 3, 4])
def test_results_come_back_and_every_call_is_counted(world_size):
    t = time.monotonic()
    run = run_ranks(ring_shift, world_size, 5, refuse=("all_reduce",))
    print(f"P={world_size}: fork + init {run.startup_s:.3f} s, whole run {time.monotonic() - t:.3f} s")
    for r in range(world_size):
        left = float((r - 1) % world_size + 1)
        assert torch.equal(run.results[r]["left"], torch.full((5,), left, dtype=torch.float64))
        assert torch.equal(run.results[r]["total"], torch.full((5,), world_size * (world_size + 1) / 2,
                                                              dtype=torch.float64))
        assert run.results[r]["same_wrapper"], "one wrapper object per function in both namespaces"
        assert run.comm[r] == [("isend", 40), ("recv", 40)], "the uncounted all_reduce is not logged"
        assert run.sent_bytes(r) == 40


def test_batch_isend_irecv_works_under_the_log():
    run = run_ranks(batched, 3)
    assert [int(t[0]) for t in run.results] == [2, 0, 1]
    assert all(c == [("isend", 16), ("irecv", 16)] for c in run.comm)


def test_a_refused_call_names_the_call_and_the_rule():
    with pytest.raises(RankFailure, match=r"(?s)all_reduce is refused here: .*point-to-point"):
        run_ranks(uses_all_reduce, 2, refuse=("all_reduce",))
    # all_gather_into_tensor reaches all_gather_single through the module's globals: refused at any depth
    with pytest.raises(RankFailure, match="all_gather_single is refused here: no"):
        run_ranks(uses_all_gather_into_tensor, 2, refuse={"all_gather_single": "no"})
    assert run_ranks(uses_all_gather_into_tensor, 2).comm[0] == [("all_gather_into_tensor", 12)], "outermost only"


def test_a_collective_kept_from_before_the_fork_is_refused_not_uncounted():
    with pytest.raises(RankFailure, match=r"ProcessGroup\.allreduce was reached without a torch\.distributed call"):
        run_ranks(saved_all_reduce, 2)


@pytest.mark.parametrize("route", [functional_all_reduce, dispatcher_all_reduce, library_reducer],
                         ids=lambda f: f.__name__)
def test_a_collective_through_the_dispatcher_is_refused_not_uncounted(route):
    with pytest.raises(RankFailure, match=r"torch\.ops\.\w+\.\w+ was reached without a torch\.distributed call"):
        run_ranks(route, 2)


def test_a_learner_modules_from_import_is_counted_and_refused(tmp_path, monkeypatch):
    """``from torch.distributed import all_reduce`` at the top of a learner module loaded before the fork."""
    from grader.core import target

    (tmp_path / "fromimport.py").write_text(
        "import torch\nfrom torch.distributed import all_reduce\n\n\n"
        "def reduce_ones():\n    x = torch.ones(3)\n    all_reduce(x)\n    return x\n")
    monkeypatch.setenv(target.TARGET_ENV, str(tmp_path))
    name = "dripstone_test_fromimport"
    spec = importlib.util.spec_from_file_location(name, tmp_path / "fromimport.py")
    sys.modules[name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sys.modules[name])
    try:
        run = run_ranks(calls_learner_module, 2, name)
        assert run.comm[0] == [("all_reduce", 12)] and torch.equal(run.results[1], torch.full((3,), 2.0))
        with pytest.raises(RankFailure, match="all_reduce is refused here"):
            run_ranks(calls_learner_module, 2, name, refuse=("all_reduce",))
    finally:
        del sys.modules[name]


def test_a_naive_ring_is_a_deadlock_verdict_within_seconds():
    t = time.monotonic()
    with pytest.raises(RankFailure) as info:
        run_ranks(naive_ring, 3, 1000)
    took = time.monotonic() - t
    print(f"deadlock verdict after {took:.2f} s")
    assert took < 10
    text = str(info.value)
    assert info.value.kind == "deadlock" and "every rank sent before it received" in text
    assert "rank 1 waiting in send(dst=2, 4000 B) at test_ranks.py" in text and "dist.send(x" in text


def test_an_exception_names_its_rank_and_line_and_costs_only_its_check():
    runs = run_ranks({"raises": rank1_raises, "deadlocks": naive_ring, "after": ring_shift}, 3, 7)
    assert set(runs.failures) == {"raises", "deadlocks"}
    assert runs.starts == 2, "a deadlock restarts the processes for the checks after it, an exception does not"
    with pytest.raises(RankFailure, match=r"rank\(s\) 1 raised:\nrank 1 raised ValueError: tensor must be 1-D at "
                                          r"test_ranks.py:\d+ `raise ValueError"):
        runs["raises"]
    assert runs["after"].sent_bytes(0) == 56


def test_a_dead_rank_is_named_with_its_last_line(capfd):
    with pytest.raises(RankFailure) as info:
        run_ranks(rank2_dies, 3)
    assert info.value.kind == "crashed"
    assert "rank 2 died (exit status 7) ; its last line: about to leave" in str(info.value)
    out, err = capfd.readouterr()
    assert "about to leave" not in out + err, "a rank's prints go to its log, never into the grading output"


def test_the_timeout_kills_every_child():
    t = time.monotonic()
    runs = run_ranks({"spins": spins, "never": pid}, 2, timeout_s=2.0)
    assert time.monotonic() - t < 6
    with pytest.raises(RankFailure, match=r"(?s)timeout: .*rank 0 running at test_ranks.py:\d+ `(while True:|pass)`"):
        runs["spins"]
    assert runs.failures["never"].kind == "not run"
    children = Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children")
    if children.exists():
        assert children.read_text().split() == [], "no child left behind"


def test_the_per_call_limit_of_make_grade_caps_the_run(monkeypatch):
    from grader.core import timeout

    monkeypatch.setattr(timeout, "_limit_s", 1.0)  # make grade --timeout 1
    t = time.monotonic()
    with pytest.raises(RankFailure, match="timeout"):
        run_ranks(spins, 2, timeout_s=20.0)
    assert time.monotonic() - t < 5


def test_world_size_outside_2_to_4_is_refused():
    with pytest.raises(ValueError, match="world_size"):
        run_ranks(pid, 5)


# ---- batch grading: the ranks fork from the worker, and loopback TCP works inside bwrap's network namespace

_IN_BATCH = """
import os, sys
sys.path.insert(0, {tests!r})
from grader.instrument import worker
from grader.kit import run_ranks
import test_ranks as t
assert worker.enabled()
run = run_ranks(t.ring_shift, 3, 5, refuse=("all_reduce",))
assert [c for c in run.comm] == [[("isend", 40), ("recv", 40)]] * 3, run.comm
pids = run_ranks(t.pid, 2).results
assert os.getpid() not in pids and len(set(pids)) == 2
try:
    run_ranks(t.naive_ring, 2, 10)
except AssertionError as e:
    assert "deadlock" in str(e), e
print("OK", run.startup_s)
"""


def _judge(prefix: list[str], script: str = _IN_BATCH, **env: str) -> subprocess.CompletedProcess[str]:
    """``script`` run as batch grading's judge (``prefix``: bwrap's view, or nothing), with ``env`` added."""
    env = {**os.environ, worker.ISOLATE_ENV: "1", worker.CALL_TIMEOUT_ENV: "60", "PYTHONPATH": str(REPO_ROOT),
           **env}
    code = script.format(tests=str(Path(__file__).parent))
    return subprocess.run([*prefix, sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=300, cwd=REPO_ROOT)


def test_in_batch_grading_the_ranks_fork_from_the_worker():
    proc = _judge([])
    assert proc.returncode == 0 and "OK" in proc.stdout, proc.stderr[-3000:]


@pytest.fixture
def bwrap_prefix() -> list[str]:
    """The sandbox's bwrap view (its own network namespace), with this Python and the repository bound in."""
    if shutil.which("bwrap") is None:
        pytest.skip("bwrap is not installed: batch grading's sandbox cannot be tried here")
    from grader.instructor import sandbox

    base = sandbox._bwrap_base(Path(sys.executable), None)
    if subprocess.run([*base, "--", "true"], capture_output=True).returncode != 0:
        pytest.skip("bwrap cannot start here (no user namespaces?)")
    python_home = [] if sys.base_prefix.startswith("/usr") else ["--ro-bind", sys.base_prefix, sys.base_prefix]
    return [*base, *python_home, "--ro-bind", str(REPO_ROOT), str(REPO_ROOT), "--chdir", str(REPO_ROOT), "--"]


def test_loopback_tcp_works_inside_the_sandbox_network_namespace(bwrap_prefix):
    proc = _judge(bwrap_prefix)
    assert proc.returncode == 0 and "OK" in proc.stdout, proc.stderr[-3000:]


# a hostile variant of known_wrong/uses_all_reduce.py: the collective bound at import, before the ranks fork
FROM_IMPORT_CHEAT = '''
from torch.distributed import all_reduce as _library_all_reduce


def ring_all_reduce(tensor):
    out = _check_vector("tensor", tensor).detach().clone()
    _library_all_reduce(out)
    return out
'''


@pytest.mark.slow
def test_a_gloo_unit_is_batch_graded_in_the_sandbox_two_students_at_once(tmp_path, bwrap_runtime):
    """l09's ring all-reduce graded by `batch --jobs 2` in bubblewrap: the ranks fork inside each student's sandbox
    (loopback TCP in its network namespace); a deadlocking ring and a collective bound before the fork score 0."""
    from grader import api
    from grader.authoring import known
    from grader.instructor import batch

    unit, exercises = "l09_collectives", ("ring_all_reduce",)
    subs = tmp_path / "subs"
    shutil.copytree(REPO_ROOT / "solutions" / unit, subs / "honest" / unit)
    (deadlock,) = [k for k in known.known_impls(unit, "known_wrong") if k.path.stem == "send_then_recv"]
    known.build_target(deadlock, subs / "deadlock")
    shutil.copytree(REPO_ROOT / "solutions" / unit, subs / "from_import" / unit)
    with (subs / "from_import" / unit / "ring.py").open("a") as f:
        f.write(FROM_IMPORT_CHEAT)
    (store,) = [k for k in known.known_impls(unit, "known_wrong") if k.path.stem == "tamper_hidden_tcpstore"]
    known.build_target(store, subs / "store")
    report = batch.run_batch(batch.BatchOptions(subs, tmp_path / "out", jobs=2, units=(unit,), exercises=exercises))
    by = {g.student: g for g in report.graded}
    alone = api.grade(REPO_ROOT / "solutions", units=[unit], exercises=exercises)
    # the honest ring keeps full marks with the judge counting its loopback (efficiency tests: wire == log)
    assert by["honest"].score == by["honest"].max_score == alone.max_score > 0, by["honest"]
    assert by["deadlock"].score == 0 and by["from_import"].score == 0 and by["store"].score == 0, by
    said = {s: (tmp_path / "out" / s / "results.json").read_text() for s in ("deadlock", "from_import", "store")}
    assert "deadlock" in said["deadlock"], said["deadlock"][-2000:]
    assert "all_reduce is refused here" in said["from_import"], said["from_import"][-2000:]
    assert "TCPStore" in said["store"], said["store"][-2000:]


def test_only_bwraps_own_network_lets_the_judge_count_the_loopback(tmp_path):
    """The variable that turns the wire count on is set where the student has a network of its own (bwrap's
    --unshare-net) and nowhere else: setpriv and rlimits share the machine's loopback with everyone."""
    from grader.instructor import sandbox

    job = sandbox.Job("s", tmp_path, tmp_path, tmp_path, ("u",), tmp_path / "r", tmp_path / "l")
    for isolation in sandbox.Isolation:
        argv, env, _ = sandbox.command(job, sandbox.Runtime(Path(sys.executable), isolation), sandbox.Limits(), 3)
        pairs = {(argv[i + 1], argv[i + 2]) for i, a in enumerate(argv[:-2]) if a == "--setenv"}
        counted = (wire.PRIVATE_NET_ENV, "1") in pairs or env.get(wire.PRIVATE_NET_ENV) == "1"
        assert counted == (isolation is sandbox.Isolation.BWRAP), isolation
        assert ("--unshare-net" in argv) == counted, isolation


# ---- the wire: in batch grading's sandbox the judge counts the loopback's bytes and checks the logs against them

_ON_THE_WIRE = """
import os, sys
sys.path.insert(0, {tests!r})
from grader.kit import run_ranks
import test_ranks as t
n = 4096
honest = run_ranks({{"a": t.logged_ring, "b": t.logged_ring}}, 3, n)
print("honest", honest.wire, honest.wire_mismatch())
assert honest.wire is not None and honest.wire_mismatch() is None, honest.wire
runs = run_ranks({{"a": t.logged_ring, "b": t.hidden_send}}, 3, n)
said = runs.wire_mismatch()
print("hidden_send", runs.wire, said)
assert runs["b"].sent_bytes(0) == 4 * n and said and "a route the comm log does not see" in said, said
# a store of one's own: its master cannot even listen (the rank's box refuses bind and listen after gloo's set-up)
runs = run_ranks({{"a": t.logged_ring, "b": t.hidden_store}}, 3, n)
assert "ranks exchange data only through torch.distributed" in str(runs.failures["b"]), runs.failures
for world in (2, 4):
    coll = run_ranks({{"a": t.logged_collectives}}, world, n)
    print("collectives", world, coll.wire, coll.wire_mismatch())
    assert coll.wire_mismatch() is None, coll.wire_mismatch()
    hidden = run_ranks({{"a": t.hidden_all_reduce}}, world, n)
    said = hidden.wire_mismatch()
    print("hidden all_reduce", world, hidden.wire, said)
    assert said and "a route the comm log does not see" in said, said
invented = run_ranks({{"a": t.invented_sends}}, 2, n)
said = invented.wire_mismatch()
print("invented", invented.wire, said)
assert said and "traffic that never reached the network" in said, said
# a deadlocked check leaves unlogged traffic: the others run again alone, and their wire is matched
mixed = run_ranks({{"stuck": t.naive_ring, "ok": t.logged_ring}}, 2, n)
print("mixed", mixed.wire, mixed.starts)
assert mixed.wire.checks == 1 and mixed.wire_mismatch() is None and mixed["ok"].results == [1.0, 0.0]
try:
    mixed["stuck"]
except AssertionError as e:
    assert "deadlock" in str(e), e
else:
    raise SystemExit("the deadlock was not reported")
print("OK")
"""


def test_the_judge_counts_the_wire_and_catches_a_log_that_hides_or_invents_traffic(bwrap_prefix):
    """Class 3 (a report forged inside the learner's processes): in bwrap's network namespace the judge reads the
    loopback's counters around each run, so traffic that a log does not show (an unlogged gloo send or all-reduce)
    or a log entry without traffic is caught whatever happened in the ranks (a TCPStore of one's own is refused
    before it carries anything: no rank listens on a port of its own); honest logs of sends and of collectives
    (all-reduce, all-gather, reduce-scatter) match."""
    proc = _judge(bwrap_prefix, _ON_THE_WIRE, **{wire.PRIVATE_NET_ENV: "1"})
    assert proc.returncode == 0 and "OK" in proc.stdout, (proc.stdout[-3000:], proc.stderr[-3000:])


def test_the_wire_is_not_counted_outside_a_network_of_ones_own(monkeypatch):
    """make grade (and batch grading without bwrap): the machine's loopback carries others' traffic too, so no
    verdict is drawn from it, even where the variable is set by mistake."""
    monkeypatch.delenv(wire.PRIVATE_NET_ENV, raising=False)
    runs = run_ranks({"a": logged_ring}, 2, 64)
    assert runs.wire is None and runs.wire_mismatch() is None and runs["a"].sent_bytes(0) == 256
    only_lo = {line.split(":")[0].strip() for line in Path("/proc/self/net/dev").read_text().splitlines()[2:]}
    monkeypatch.setenv(wire.PRIVATE_NET_ENV, "1")
    assert (wire._net_counters() is None) == (only_lo != {"lo"})


def test_the_wire_is_held_to_the_tests_own_account_not_to_a_forged_log():
    """A log is the learner's claim: an entry forged to explain hidden traffic (a broadcast that never happened)
    would make the logs and the wire agree, so a test passes the calls it expects of a right implementation and
    those are what the wire must match. Entries no wrapper writes (a negative size, a bool, an unknown name) are
    refused outright, and a call with no model (an object collective) allows headers only."""
    def runs(log0: list, payload: int) -> wire.RankRuns:
        out = wire.RankRuns(2, starts=1)
        out.outcomes["a"] = ranks.RankRun(2, [None, None], [log0, [("isend", 98_000)]])
        out.wire = wire.Wire(payload=payload, retransmits=0, starts=1, checks=1)
        return out

    expected = {"a": [[("isend", 98_000)], [("isend", 98_000)]]}
    honest = runs([("isend", 98_000)], 200_000)
    assert honest.wire_mismatch() is None and honest.wire_mismatch(expected) is None
    hidden = runs([("isend", 98_000)], 300_000)  # 100 kB that no call accounts for
    assert "does not see" in hidden.wire_mismatch() and "does not see" in hidden.wire_mismatch(expected)
    with pytest.raises(AssertionError, match="ring on 2 ranks: .*does not see"):
        hidden.assert_wire("ring", expected)
    forged = runs([("isend", 98_000), ("broadcast", 200_000)], 300_000)
    assert forged.wire_mismatch() is None  # the log explains the traffic: the limit of trusting a log
    assert "does not see" in forged.wire_mismatch(expected)  # the test's own account does not
    for unmodeled in (("all_gather_object", 10**9), ("barrier", 10**9), ("send_object_list", 10**9)):
        assert "does not see" in runs([("isend", 98_000), unmodeled], 300_000).wire_mismatch(), unmodeled
    for bad in (("isend", -100_000), ("isend", True), ("isend", 2.5e5), ("secret", 1), ["isend", 1]):
        said = runs([("isend", 98_000), bad], 200_000).wire_mismatch()
        assert said and "no torch.distributed call writes" in said, (bad, said)


# ---- the rank's box (R3.6): ranks exchange data through torch.distributed only, whatever call they try


def test_each_rank_has_private_temporary_folders_a_read_only_file_system_and_no_inherited_descriptor():
    read, write = os.pipe()  # made before the fork: every rank would inherit it
    try:
        run = run_ranks(box_state, 2, write)
    finally:
        os.close(read)
        os.close(write)
    for rank, got in enumerate(run.results):
        assert got["box"] == "" and got["proc"] == "", f"rank {rank}: no mount namespace of its own: {got}"
        assert got["pids"] == [got["self"]] and got["status"] == 1, f"rank {rank} sees other processes: {got}"
        assert got["mine"] and not got["other"], got  # its own /tmp folder, not the other rank's
        assert got["read_only"], "a folder outside the private tmpfs must be read-only"
        assert not any(n.startswith("dripstone-ranks-") for n in got["tmp"]), got["tmp"]  # nor the ranks' folder
        assert not got["pipe"], "a descriptor the parent held is closed in a rank"


@pytest.mark.parametrize("route", [writes_a_file, writes_a_file_and_hides_the_error, forks, runs_a_shell,
                                   makes_a_link, signals_the_parent, locks_a_file, listens_on_a_port],
                         ids=lambda f: f.__name__)
def test_a_call_around_torch_distributed_fails_the_check_saying_why(route):
    """Refused at run time by the seccomp filter, even where the learner's code catches the error: the check fails
    naming the rule (a shell dies of SIGSYS, since posix_spawn blocks signals: the same message)."""
    with pytest.raises(RankFailure, match="ranks exchange data only through torch.distributed") as info:
        run_ranks(route, 2)
    assert "RefusedCall" in str(info.value) or "SIGSYS" in str(info.value), str(info.value)


def test_a_unix_socket_and_shared_memory_from_before_the_fork_carry_nothing():
    assert run_ranks(opens_a_unix_socket, 2).results == ["refused: 97"] * 2  # EAFNOSUPPORT: no channel
    assert run_ranks(reads_shared_memory, 2).results == [0, 0], "reading an inherited mapping is harmless"
    with pytest.raises(RankFailure, match=r"(?s)died \(killed by SIGSEGV\) at test_ranks.py:\d+ `_SHARED_PAGE\[rank\]"
                                          r".*read-only in every rank: ranks exchange data only through"):
        run_ranks(writes_shared_memory, 2)


def test_rank_seeds_are_secret_per_rank_and_per_check_and_come_back_to_the_test():
    runs = run_ranks({"a": my_seed, "b": my_seed}, 3)
    a, b = runs["a"], runs["b"]
    assert a.seeds == a.results and b.seeds == b.results
    assert len(set(a.seeds + b.seeds)) == 6 and all(0 <= x < 2**56 for x in a.seeds)
    with pytest.raises(RuntimeError, match="inside a check run by run_ranks"):
        ranks.rank_seed()


_BOXED_UNPRIVILEGED = """
import sys
sys.path.insert(0, {tests!r})
from grader.kit import RankFailure, run_ranks
import test_ranks as t
got = run_ranks(t.box_state, 2).results
assert all(g["box"] == g["proc"] == "" and g["pids"] == [g["self"]] and g["mine"] and not g["other"]
           and g["read_only"] for g in got), got
for route in (t.writes_a_file, t.forks, t.runs_a_shell):
    try:
        run_ranks(route, 2)
    except RankFailure as e:
        assert "ranks exchange data only through torch.distributed" in str(e), e
    else:
        raise SystemExit(route.__name__ + " was not refused")
print("OK")
"""


def test_the_box_holds_in_the_sandbox_as_its_unprivileged_user(bwrap_prefix):
    """Batch grading's judge runs in bwrap as an unprivileged uid (setpriv, no capability, no_new_privs): each rank
    still gets its user and mount namespaces and its seccomp filter."""
    from grader.instructor import sandbox
    from grader.tools.host import PROBE_UID

    inner = bwrap_prefix[:-1] + ["--", *sandbox._setpriv(PROBE_UID)]
    proc = _judge(inner, _BOXED_UNPRIVILEGED)
    assert proc.returncode == 0 and "OK" in proc.stdout, (proc.stdout[-3000:], proc.stderr[-3000:])
