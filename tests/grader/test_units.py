"""Unit folder names: one definition (grader/core/target.py) for the CLI, batch unpacking and the course."""

from __future__ import annotations

import pytest

from grader import api
from grader.core import target
from grader.instructor import unpack


@pytest.mark.parametrize("name", ["l02_ai_math", "l23_online_softmax", "c3_serving", "c10_demo", "c99_x"])
def test_lectures_take_two_digits_and_capstones_one_or_two(name):
    assert target.is_unit(name), f"is_unit({name!r}) is False: a unit folder must be recognized"


@pytest.mark.parametrize("name", ["l2_ai_math", "l123_x", "c100_x", "c3", "grader", "l23_online_softmax\n", "x23_y"])
def test_other_names_are_not_units(name):
    assert not target.is_unit(name), f"is_unit({name!r}) is True: only lNN_slug and cN_slug/cNN_slug are units"


def test_a_two_digit_capstone_is_listed_after_the_lectures_and_resolved(monkeypatch, tmp_path):
    for name in ("c10_demo", "c3_serving", "l23_online_softmax", "l02_ai_math", "grader", "__pycache__"):
        (tmp_path / name).mkdir()
    monkeypatch.setattr(api, "TESTS", tmp_path)
    assert api.all_units() == ["l02_ai_math", "l23_online_softmax", "c3_serving", "c10_demo"]
    assert api.resolve_units(["C10"]) == ["c10_demo"]
    assert api.resolve_units(["c3"]) == ["c3_serving"]


def test_a_submission_holding_only_a_two_digit_capstone_is_found_under_its_folder(tmp_path):
    (tmp_path / "alice" / "c10_demo").mkdir(parents=True)
    assert unpack.submission_root(tmp_path) == tmp_path / "alice"
