"""gloo's bytes on the wire, measured by the judge (grader/judge/gloo_model.py) and stored per torch release
(grader/judge/gloo_models.json): the wire check's model is what the measurement reads, a release with no stored
model is measured before the first wire check, and a broken models file says what is wrong (THREAT_MODEL R3.11)."""

from __future__ import annotations

import json

import pytest
from test_ranks import _judge, bwrap_prefix  # noqa: F401  (the sandbox's view, a fixture)

from grader.instrument import ranks
from grader.judge import gloo_model as gm
from grader.judge import wire
from grader.tools import gloo_model as tool

FAKE = "9.99.0"  # a torch release no model is stored for


@pytest.fixture(scope="module")
def raw() -> dict:
    """One measurement on this machine's torch (3-5 s of CPU, in a network namespace of its own)."""
    try:
        return gm.measure()
    except gm.MeasureError as exc:
        if "unshare" in str(exc):
            pytest.skip(f"no user and network namespaces here: {exc}")
        raise


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """No model measured yet in this process, and a cache of the test's own."""
    monkeypatch.setattr(gm, "_MEASURED", {})
    monkeypatch.setattr(wire, "_SAID", set())
    monkeypatch.setenv(gm.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.delenv(gm.ISOLATED_ENV, raising=False)
    return tmp_path


def _runs(payload: int) -> wire.RankRuns:
    """A two-rank run whose logs say one 98 kB send per rank, and the loopback carried ``payload``."""
    out = wire.RankRuns(2, starts=1)
    out.outcomes["a"] = ranks.RankRun(2, [None, None], [[("isend", 98_000)], [("isend", 98_000)]])
    out.wire = wire.Wire(payload=payload, retransmits=0, starts=1, checks=1)
    return out


def test_the_tool_measures_the_stored_model_of_this_torch(raw):
    """The stored 2.13.0 numbers are what the judge's measurement reads here, with their margins: every number it
    reads lies within the stored model's room, and the model it derives is the stored one give or take the noise
    of one run (shares within the wire check's 1 %, headers and starts within a factor of 2)."""
    stored = gm.load_stored()
    release = gm.torch_release()
    assert release in stored, "requirements.txt pins a torch release whose model is stored"
    model, reading = stored[release], gm.read(raw)
    assert gm.covers(model, reading) == [], gm.covers(model, reading)
    derived = gm.derive(raw)
    for key in ("msg_min", "msg_max", "start_base", "start_per_pair", "barrier_per_rank", "collective_per_pair"):
        got, want = getattr(derived, key), getattr(model, key)
        assert want / 2 <= got <= want * 2, (key, got, want)
    assert derived.list_headers == model.list_headers == {"reduce_scatter"}
    assert set(derived.shares) == set(gm.SHARED) and set(model.shares) >= set(gm.SHARED)
    for name, per in derived.shares.items():
        for world, share in per.items():
            assert abs(share - model.share(name, world)) <= gm.RELATIVE * model.share(name, world), (name, world)
    # every world size, every collective the model shares, sends: all measured
    assert set(raw["worlds"]) == {str(w) for w in ranks.WORLD_SIZES}
    measured = {row[0] for per in raw["worlds"].values() for row in per["brackets"]}
    assert measured == {*gm.SHARED, "ring", "barrier", "nothing"}
    # a measurement that misses the traffic (a share read as nothing) is caught by the same comparison
    broken = gm.read(raw)
    broken.shares["all_reduce"] = {w: 0.0 for w in broken.shares["all_reduce"]}
    assert any("all_reduce" in said for said in gm.covers(model, broken))


def test_a_release_with_no_stored_model_is_measured_before_the_first_wire_check_and_used(raw, fresh, monkeypatch):
    """On a torch with no stored model the judge measures gloo here (judge-written calls, in a process and network
    of its own), caches it per release, and holds the wire to it: honest traffic passes, hidden traffic fails and
    the message says the model was measured here. Inside batch grading's sandbox a cache the learner could have
    written is not read."""
    calls = []

    def measure(timeout_s: float = 30.0) -> dict:
        calls.append(gm.torch_release())
        return raw

    monkeypatch.setattr(gm, "torch_release", lambda: FAKE)
    monkeypatch.setattr(gm, "measure", measure)
    assert _runs(200_000).wire_mismatch() is None  # one 98 kB send per rank and its header: honest
    said = _runs(300_000).wire_mismatch()  # 100 kB no call accounts for
    assert "does not see" in said and "measured here before the first wire check" in said, said
    assert f"torch {FAKE}" in said and "stored models: 2.13.0" in said and gm.TOOL in said, said
    assert calls == [FAKE], "measured once, before the first check, for this release"
    model, _ = gm.model_for_this_torch()
    assert model.release == FAKE and model.source == "measured here" and model.msg_max >= 75
    cached = fresh / "cache" / f"{FAKE}.json"
    assert gm.GlooModel.from_json(FAKE, json.loads(cached.read_text())) == gm.GlooModel.from_json(
        FAKE, model.to_json())
    # a new judge process reads the cache, measuring nothing
    monkeypatch.setattr(gm, "_MEASURED", {})
    model, note = gm.model_for_this_torch()
    assert model.source == "cached" and calls == [FAKE] and str(cached) in note
    # in batch grading's sandbox a cache the learner's code can write (HOME is its /tmp) is not trusted: a model
    # planted there with room for anything is not read, the model is measured again, and nothing is written
    poisoned = {**model.to_json(), "msg_max": 10**5, "collective_per_pair": 10**5}
    cached.write_text(json.dumps(poisoned))
    monkeypatch.setattr(gm, "_MEASURED", {})
    monkeypatch.setenv(gm.ISOLATED_ENV, "1")
    model, _ = gm.model_for_this_torch()
    assert model.source == "measured here" and model.msg_max < 10**3 and calls == [FAKE, FAKE]
    assert json.loads(cached.read_text()) == poisoned
    assert "does not see" in _runs(300_000).wire_mismatch()


def test_where_measuring_fails_the_wire_check_is_skipped_saying_both_releases_and_the_command(fresh, monkeypatch):
    """Never a silent failure of an honest student: with no model, the wire part is skipped, and the judge's log
    says why, with the stored releases, this one and the command that stores a model."""
    def fails(timeout_s: float = 30.0) -> dict:
        raise gm.MeasureError("no network namespace of its own: unshare: Operation not permitted")

    monkeypatch.setattr(gm, "torch_release", lambda: FAKE)
    monkeypatch.setattr(gm, "measure", fails)
    with pytest.warns(RuntimeWarning, match="the wire check is skipped") as caught:
        assert _runs(300_000).wire_mismatch() is None and _runs(10).wire_mismatch() is None
    said = str(caught[0].message)
    assert len(caught) == 1, "said once per process"
    assert f"torch 2.13.0, this is torch {FAKE}" in said and gm.TOOL in said and "Operation not permitted" in said
    # the same run on the stored release is checked: the skip is the model's, not the wire's
    monkeypatch.setattr(gm, "torch_release", lambda: "2.13.0")
    assert "does not see" in _runs(300_000).wire_mismatch()


@pytest.mark.parametrize("text, says", [
    (None, "does not exist"),
    ("{not json", "cannot be read"),
    (json.dumps({"models": {}}), "malformed"),
    (json.dumps({"format": 1, "models": {"2.13.0": {"msg_min": "75"}}}), "msg_min must be a whole number"),
    (json.dumps({"format": 1, "models": {"2.13.0": {**dict.fromkeys(
        ("msg_min", "msg_max", "start_base", "start_per_pair", "barrier_per_rank", "collective_per_pair"), 1),
        "shares": {"all_reduce": {"2": "lots"}}}}}), "shares are not numbers"),
], ids=["missing", "not-json", "no-format", "bad-number", "bad-share"])
def test_a_missing_or_corrupt_models_file_says_what_is_wrong_and_how_to_fix_it(text, says, fresh, monkeypatch,
                                                                               capsys):
    """The file's problem and the command that writes it again, from the loader, the judge (which then measures
    the model in place, and says the file's problem if that fails too) and the tool."""
    path = fresh / "gloo_models.json"
    if text is not None:
        path.write_text(text)
    monkeypatch.setattr(gm, "MODELS_FILE", path)
    with pytest.raises(gm.ModelFileError, match=says) as info:
        gm.load_stored()
    assert str(path) in str(info.value) and gm.TOOL in str(info.value)

    def fails(timeout_s: float = 30.0) -> dict:
        raise gm.MeasureError("no network namespace of its own")

    monkeypatch.setattr(gm, "measure", fails)
    model, note = gm.model_for_this_torch()
    assert model is None and says in note and "the wire check is skipped" in note and gm.TOOL in note, note
    assert tool.main([]) == 1 and says in capsys.readouterr().err


def test_the_tool_prints_the_model_beside_the_one_in_use_and_stores_it(raw, fresh, monkeypatch, capsys):
    """``python -m grader.tools.gloo_model`` shows the measured numbers next to the stored ones; ``--write`` adds
    this release's model to the file, keeping the others (a broken file is replaced)."""
    path, real = fresh / "gloo_models.json", gm.MODELS_FILE
    path.write_text(real.read_text())
    monkeypatch.setattr(gm, "MODELS_FILE", path)
    monkeypatch.setattr(gm, "measure", lambda timeout_s=30.0: raw)
    assert tool.main([]) == 0
    out = capsys.readouterr().out
    assert "measured" in out and "in use" in out and "the stored model covers this measurement" in out, out
    assert "all_reduce share on 4 ranks" in out and "1.50000" in out
    monkeypatch.setattr(gm, "torch_release", lambda: FAKE)
    assert tool.main(["--write"]) == 0 and "none stored" in capsys.readouterr().out
    stored = gm.load_stored(path)
    assert set(stored) == {"2.13.0", FAKE} and stored[FAKE].note.startswith("measured by")
    assert stored["2.13.0"].to_json() == json.loads(real.read_text())["models"]["2.13.0"]
    path.write_text("garbage")
    assert tool.main(["--write"]) == 0 and set(gm.load_stored(path)) == {FAKE}


_IN_THE_SANDBOX = """
import os, sys
sys.path.insert(0, {tests!r})
from grader.judge import gloo_model as gm
from grader.kit import run_ranks
import test_ranks as t
gm.torch_release = lambda: "9.99.0"
honest = run_ranks({{"a": t.logged_ring}}, 3, 4096)
assert honest.wire_mismatch() is None, honest.wire_mismatch()
model, note = gm.model_for_this_torch()
assert model is not None and model.source == "measured here", note
hidden = run_ranks({{"a": t.hidden_send}}, 3, 4096)
said = hidden.wire_mismatch()
assert said and "does not see" in said and "measured here" in said, said
print("OK", os.getuid(), model.msg_min, model.msg_max, model.collective_per_pair)
"""


def test_the_judge_measures_the_model_in_the_sandbox_as_its_unprivileged_user(bwrap_prefix):  # noqa: F811
    """Batch grading's judge (bwrap, an unprivileged uid, no capability) on a torch with no stored model measures
    gloo in a network of the measurement's own before the first wire check, and holds the wire to it."""
    from grader.instructor import sandbox
    from grader.tools.host import PROBE_UID

    inner = bwrap_prefix[:-1] + ["--", *sandbox._setpriv(PROBE_UID)]
    proc = _judge(inner, _IN_THE_SANDBOX, **{wire.PRIVATE_NET_ENV: "1"})
    assert proc.returncode == 0 and f"OK {PROBE_UID}" in proc.stdout, (proc.stdout[-3000:], proc.stderr[-3000:])


def test_batch_grading_s_judge_has_the_model_before_any_learner_code_runs(raw, fresh, monkeypatch):
    """The sandbox's judge entry (grader/instructor/sandbox.py::judge_main) gets the model before pytest starts,
    where the wire is counted: on a release with no stored model it is measured then, with no learner's worker
    alive to share its time; nothing is measured where the wire is not counted."""
    from grader.instructor import sandbox

    calls = []
    monkeypatch.setattr(gm, "torch_release", lambda: FAKE)
    monkeypatch.setattr(gm, "measure", lambda timeout_s=30.0: calls.append(1) or raw)
    monkeypatch.delenv(wire.PRIVATE_NET_ENV, raising=False)
    sandbox._gloo_model_first()
    assert calls == []
    monkeypatch.setenv(wire.PRIVATE_NET_ENV, "1")
    sandbox._gloo_model_first()
    assert calls == [1] and gm.model_for_this_torch()[0].source == "measured here" and calls == [1]
