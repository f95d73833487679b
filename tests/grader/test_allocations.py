"""What a window of code leaves allocated, wherever it is referenced (grader/instrument/allocations.py): the count
the ranks' memory checks (L29's ShardedAdam) take instead of walking an object's attributes."""

from __future__ import annotations

import array
import os
import types

import numpy as np
import pytest
import torch

from grader.instrument import allocations, loader

pytestmark = pytest.mark.skipif(not allocations.measurable(), reason="the heap is counted with glibc's mallinfo2")

MB = 2**20
ELEMENTS = 4 * MB // 8  # 4 MiB of float64
ELSEWHERE = types.ModuleType("elsewhere")  # "another module"
GLOBAL_STATE: dict = {}


def _held(keep) -> allocations.Held:
    window = allocations.Allocations().start()
    kept = keep()
    held = window.stop()
    del kept
    return held


def _closure():
    m = torch.zeros(ELEMENTS, dtype=torch.float64)
    return lambda: m


def _default_argument(box=[]):  # noqa: B006  (the point: state in a default argument)
    box.append(torch.zeros(ELEMENTS, dtype=torch.float64))
    return box


@pytest.mark.parametrize("where", ["attribute", "module dict", "closure", "default argument", "other module",
                                   "bare storage", "numpy", "python array", "bytearray", "list of floats"])
def test_state_counts_wherever_it_is_referenced(where):
    """4 MiB kept in each of ten places, none of them the caller's object: every one is counted (a list of floats
    is more: 24 B per float object, 8 B per slot)."""
    GLOBAL_STATE.clear()
    _default_argument.__defaults__[0].clear()
    keep = {
        "attribute": lambda: types.SimpleNamespace(m=torch.zeros(ELEMENTS, dtype=torch.float64)),
        "module dict": lambda: GLOBAL_STATE.setdefault("m", torch.zeros(ELEMENTS, dtype=torch.float64)),
        "closure": _closure,
        "default argument": _default_argument,
        "other module": lambda: setattr(ELSEWHERE, "m", torch.zeros(ELEMENTS, dtype=torch.float64)),
        "bare storage": lambda: GLOBAL_STATE.setdefault("s", torch.UntypedStorage(ELEMENTS * 8)),
        "numpy": lambda: np.zeros(ELEMENTS),
        "python array": lambda: array.array("d", bytes(ELEMENTS * 8)),
        "bytearray": lambda: bytearray(ELEMENTS * 8),
        "list of floats": lambda: [float(i) for i in range(ELEMENTS // 2)],  # 256K floats: 24 B each + an 8 B slot
    }[where]
    held = _held(keep)
    assert held.intact
    assert held.total >= 4 * MB - 64 * 1024, f"{where}: {held}"
    GLOBAL_STATE.clear()
    ELSEWHERE.__dict__.pop("m", None)


def test_temporaries_do_not_count_and_credit_is_the_tensors_own_bytes():
    """Freed temporaries leave (almost) nothing; a credited gradient is taken off at numel·element_size only, so a
    gradient that views a larger storage leaves the excess counted."""
    window = allocations.Allocations().start()
    for _ in range(3):
        t = torch.randn(ELEMENTS, dtype=torch.float64) * 2
        del t
    grad = torch.zeros(ELEMENTS, dtype=torch.float64)
    held = window.stop([grad])
    assert abs(held.total) < 256 * 1024, held
    del grad
    window = allocations.Allocations().start()
    grad = torch.zeros(3 * ELEMENTS, dtype=torch.float64)[:ELEMENTS]  # 8 MiB hidden behind a 4 MiB gradient
    held = window.stop([grad])
    assert held.total >= 8 * MB - 64 * 1024, held


def test_freeing_older_memory_does_not_hide_a_fresh_copys_state(tmp_path, monkeypatch):
    """A module whose copy made a pool before the window: a fresh copy loaded inside the window has its own pool
    (counted), and cannot reach the old copy's to free it or reuse it."""
    unit = tmp_path / "u"
    unit.mkdir()
    (unit / "m.py").write_text(f"import torch\nPOOL = torch.zeros({ELEMENTS}, dtype=torch.float64)\n")
    monkeypatch.setenv("DRIPSTONE_TARGET", str(tmp_path))
    old = loader.load_fresh("u", "m")
    window = allocations.Allocations().start()
    new = loader.load_fresh("u", "m")
    held = window.stop()
    assert new.POOL.data_ptr() != old.POOL.data_ptr()
    assert held.total >= 4 * MB - 64 * 1024, held


def test_switching_tracing_off_is_reported():
    import tracemalloc

    window = allocations.Allocations().start()
    tracemalloc.stop()
    assert not window.stop().intact


REGISTRY_MODULE = f"""import torch
if not hasattr(torch.optim.Optimizer, "dripstone_test_pool"):  # a registry every copy of the module shares
    torch.optim.Optimizer.dripstone_test_pool = torch.zeros({ELEMENTS}, dtype=torch.float64)
POOL = torch.optim.Optimizer.dripstone_test_pool
"""


def check_registry_pool(rank: int, world_size: int) -> dict:
    """A rank's window around a fresh copy of the module: what it counts, and whether learner code ran before."""
    from grader.instrument import clean

    before = clean.pristine()
    window = allocations.Allocations().start()
    module = loader.load_fresh("u", "m")
    held = window.stop()
    return {"pristine": before, "held": held.total, "pool": module.POOL.numel()}


def test_a_fresh_run_has_no_state_from_a_copy_imported_before(tmp_path, monkeypatch):
    """A copy of the module imported in this process leaves a pool in a process-wide registry; ranks forked from
    here hand it to a fresh copy (nothing counted), ranks of run_ranks(fresh=True) never had it (counted)."""
    from grader.kit import run_ranks

    unit = tmp_path / "u"
    unit.mkdir()
    (unit / "m.py").write_text(REGISTRY_MODULE)
    monkeypatch.setenv("DRIPSTONE_TARGET", str(tmp_path))
    loader.load_fresh("u", "m")  # the copy imported earlier: learner code ran in this process
    try:
        here = run_ranks(check_registry_pool, 2)
        fresh = run_ranks(check_registry_pool, 2, fresh=True)
    finally:
        del torch.optim.Optimizer.dripstone_test_pool
    for rank in range(2):
        assert not here.results[rank]["pristine"] and here.results[rank]["held"] < MB, here.results[rank]
        assert fresh.results[rank]["pristine"], fresh.results[rank]
        assert fresh.results[rank]["held"] >= 4 * MB - 64 * 1024, fresh.results[rank]


def check_server_pid(rank: int, world_size: int) -> int:
    import os

    return os.getppid()  # the process the rank was forked from


def test_the_clean_server_is_a_child_of_the_grader_and_is_restarted_after_it_dies(tmp_path, monkeypatch):
    """The server is started through grader.core.child (its own group, dies with the grader); killed, the request
    it was asked says so, and the next fresh run starts another."""
    import signal

    from grader.core import child
    from grader.instrument import clean
    from grader.kit import run_ranks

    unit = tmp_path / "u"
    unit.mkdir()
    (unit / "m.py").write_text("X = 1\n")
    monkeypatch.setenv("DRIPSTONE_TARGET", str(tmp_path))
    loader.load_fresh("u", "m")  # learner code ran here: fresh runs go to the server
    first = run_ranks(check_server_pid, 2, fresh=True)
    server = clean._server
    assert server is not None and isinstance(server.process, child.Child)
    assert list(first.results) == [server.process.pid] * 2  # the ranks were forked by the server
    assert os.getpgid(server.process.pid) == server.process.pid  # leads its own group
    os.kill(server.process.pid, signal.SIGKILL)
    with pytest.raises(RuntimeError, match="clean rank server ended"):
        clean._ask({})
    second = run_ranks(check_server_pid, 2, fresh=True)
    assert clean._server is not None and second.results[0] == clean._server.process.pid != server.process.pid


ZYGOTE_CHECKS = '''
import os
import sys


def where_forked(rank, world_size):
    return {"server": os.getppid(), "argv": list(sys.argv),  # a fork keeps its parent's argv, an exec has its own
            "learner_modules": sorted(m for m in sys.modules if m.startswith("_dripstone"))}
'''

ZYGOTE_SCRIPT = '''
import json, os, sys
sys.path.insert(0, sys.argv[1])
import zygote_checks
from grader.instrument import clean, loader
from grader.kit import fresh_ranks_ahead, run_ranks

fresh_ranks_ahead()                     # a test module's collection
assert clean._server is None            # nothing is forked before learner code is about to run
loader.load_fresh("u", "m")             # the first learner code: the server is forked just before it
server = clean._server
run = run_ranks(zygote_checks.where_forked, 2, fresh=True)
pid = os.fork()                         # a process forked from this one (batch's worker) starts its own server
if pid == 0:
    clean.run_here([("w", zygote_checks.where_forked)], 2, (), {}, 20.0, {}, 20.0)
    os._exit(0 if clean._server.owner == os.getpid() and clean._server.process.pid != server.process.pid else 3)
_, status = os.waitpid(pid, 0)
print(json.dumps({"server": server.process.pid, "owner": server.owner, "me": os.getpid(),
                  "ranks": [run.results[r] for r in range(2)], "child_status": status}))
'''


def test_a_test_module_that_asks_ahead_gets_a_server_forked_before_any_learner_code(tmp_path):
    """fresh_ranks_ahead() at collection: the server is this process forked just before the first learner module
    executes (no new interpreter: the grader's own command line), so the ranks it forks hold no learner module;
    a process forked from the owner does not talk to the owner's server."""
    import json
    import subprocess
    import sys

    (tmp_path / "u").mkdir()
    (tmp_path / "u" / "m.py").write_text("X = 1\n")
    (tmp_path / "zygote_checks.py").write_text(ZYGOTE_CHECKS)
    done = subprocess.run([sys.executable, "-c", ZYGOTE_SCRIPT, str(tmp_path)], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "DRIPSTONE_TARGET": str(tmp_path)}, cwd=os.getcwd())
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.splitlines()[-1])
    assert got["owner"] == got["me"] and got["child_status"] == 0, got
    for rank in got["ranks"]:
        assert rank["server"] == got["server"], got  # forked by the server
        assert rank["argv"] == ["-c", str(tmp_path)], rank  # a fork of this process, not an interpreter
        assert rank["learner_modules"] == [], rank  # forked before the learner's module ran
