"""grader.tools.strictness: each over-strictness kind is found, the legitimate forms are not."""

from __future__ import annotations

import json
import textwrap

from grader.tools import strictness

TESTS = '''
import math, pytest, inspect
from grader.kit import assert_exact, assert_number, assert_parts, learner

WANT = {"a": 1}
ranks = learner("l99_demo", "demo", "ranks")


def test_dicts(got):
    assert got == {"a": 1, "b": 2}
    assert got == dict(a=1)
    want = {"a": 1}
    assert got == want
    assert set(got) == {"a", "b"}
    assert_parts(got, {"a": 1}, "f()")
    assert got == WANT


def test_dicts_ok(got):
    assert_parts({k: got[k] for k in ("a",) if k in got}, {"a": 1}, "f()")
    assert_parts(named_keys(got, {"a": 1}), {"a": 1}, "f()")
    assert got["a"] == 1
    assert set(("a",)) <= set(got)
    assert named_keys(got) == {"a": 1}
    table, want = {k: v for k, v in got.items()}, {"x": 1}
    assert table == want
    if set(got) == {"a", "b"}:
        print("a diagnostic")


def test_floats(got):
    assert got == 0.5
    assert got["r"] == 1 / 3
    assert_number(got, 0.5, "f()", rel=0)


def test_floats_ok(got):
    assert round(got, 2) == 0.33
    assert_exact(got, 3, "f()")
    assert_number(got, 0.5, "f()", rel=1e-9)
    assert got == 3
    assert got == math.inf


def test_wording(fn):
    with pytest.raises(ValueError, match="must be a positive int"):
        fn(-1)
    with pytest.raises(ValueError, match="overflow"):
        fn(-3)
    try:
        fn(-2)
    except ValueError as err:
        assert "must be positive" in str(err)


def test_wording_ok(fn):
    with pytest.raises(ValueError, match="n_layers"):
        fn(-1)
    try:
        fn(-2)
    except ValueError as err:
        assert "n_layers" in str(err)


def test_sequences():
    got = ranks(4)
    assert got == [0, 1, 2, 3]
    assert ranks(2)[0] == (0, 1)
    assert isinstance(got, list)


def test_sequences_ok(x):
    got = ranks(4)
    assert list(got) == [0, 1, 2, 3]
    assert as_list(ranks(2)) == [0, 1]
    assert got.shape == (4,)
    assert isinstance(got, list | tuple)
    mine = [1]
    assert mine == [1]
    assert x == [1]


def test_stride(t, got):
    want = t.stride()
    assert got == want
    assert t.view(2, 3).stride() == (3, 1)


def test_names(err, fn):
    assert type(err).__name__ == "NoFreeBlocks"
    assert type(err).__name__ == "PoolExhausted"
    assert len(inspect.signature(fn).parameters) == 4
    assert hasattr(fn, "reset")
'''

STRATEGY = '''
from hypothesis import strategies as st


@st.composite
def edges(draw):
    x = draw(st.floats(0, 1))
    if float(x) == x:
        return x
'''


def _tree(tmp_path, readme: str = "Bad arguments raise ValueError naming the argument (`n_layers`)."):
    tests, solutions = tmp_path / "tests", tmp_path / "solutions"
    (tests / "l99_demo").mkdir(parents=True)
    (tests / "l99_demo" / "test_demo.py").write_text(TESTS)
    (tests / "l99_demo" / "test_strategy.py").write_text(STRATEGY)
    (tests / "l99_demo" / "helper.py").write_text("assert {} == {}\n")  # not a test file: not scanned
    (solutions / "l99_demo").mkdir(parents=True)
    (solutions / "l99_demo" / "README.md").write_text(textwrap.dedent(readme))
    return tests, solutions


def _lines(findings, kind):
    src = TESTS.splitlines()
    return [src[f.line - 1].strip() for f in findings if f.kind == kind]


def test_each_kind_found_and_legitimate_cases_not(tmp_path):
    tests, solutions = _tree(tmp_path)
    found = strictness.scan(tests=tests, solutions=solutions)
    assert {f.file for f in found} == {"tests/l99_demo/test_demo.py"}  # strategies and helpers are not checks
    dicts = _lines(found, "dict")
    assert dicts == ['assert got == {"a": 1, "b": 2}', "assert got == dict(a=1)", "assert got == want",
                     'assert set(got) == {"a", "b"}', 'assert_parts(got, {"a": 1}, "f()")',
                     "assert got == WANT"]
    floats = _lines(found, "float")
    assert floats == ["assert got == 0.5", 'assert got["r"] == 1 / 3', 'assert_number(got, 0.5, "f()", rel=0)']
    assert _lines(found, "wording") == ['with pytest.raises(ValueError, match="must be a positive int"):',
                                        'with pytest.raises(ValueError, match="overflow"):',
                                        'assert "must be positive" in str(err)']
    assert _lines(found, "stride") == ["assert got == want", "assert t.view(2, 3).stride() == (3, 1)"]
    assert _lines(found, "name") == ['assert type(err).__name__ == "NoFreeBlocks"',
                                     'assert type(err).__name__ == "PoolExhausted"',
                                     "assert len(inspect.signature(fn).parameters) == 4",
                                     'assert hasattr(fn, "reset")']
    assert _lines(found, "sequence") == ["assert got == [0, 1, 2, 3]", "assert ranks(2)[0] == (0, 1)",
                                         "assert isinstance(got, list)"]
    assert strictness.counts(found)["by_kind"] == {"dict": 6, "float": 3, "wording": 3, "stride": 2, "name": 4,
                                                   "sequence": 3}


def test_readme_rules_make_a_kind_legitimate(tmp_path):
    tests, solutions = _tree(tmp_path, """
        The result dict has exactly the keys below. Floats are compared exactly: each is a ratio of
        small ints. Size-1 dimensions get the stride torch gives them.
        Results are compared within a relative tolerance of 1e-9. A short pool raises `NoFreeBlocks`.
    """)
    found = strictness.scan(tests=tests, solutions=solutions)
    assert {f.kind for f in found} == {"wording", "name", "sequence"}
    assert [f.code for f in found if f.kind == "name"][0] == 'assert type(err).__name__ == "PoolExhausted"'
    tests, solutions = _tree(tmp_path / "b", "Results are compared within a relative tolerance of 1e-9.")
    found = strictness.scan(tests=tests, solutions=solutions)
    assert "float" in {f.kind for f in found}  # a tolerance is no rule for ==


def test_command_line_table_and_json(tmp_path, capsys):
    tests, solutions = _tree(tmp_path)
    assert strictness.main(["l99", "--tests", str(tests), "--solutions", str(solutions)]) == 0
    out = capsys.readouterr().out
    assert "tests/l99_demo/test_demo.py:" in out
    assert "per kind: dict 6, float 3, wording 3, stride 2, name 4, sequence 3" in out
    assert strictness.main(["l99_demo", "--json", "--tests", str(tests), "--solutions", str(solutions)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["total"] == 21 and data["by_unit"] == {"l99_demo": {"dict": 6, "float": 3, "wording": 3,
                                                                     "stride": 2, "name": 4, "sequence": 3}}
    assert {"unit", "file", "line", "kind", "code"} <= set(data["findings"][0])
