"""The template proof: every template of grader/drill/bank/, 200 random instances each.

The answer is the graded solution function's (solutions/), the derivation's numbers add up to it, the
parser accepts it printed in every unit the template allows and rejects it 1.5× off; the bank data file
that the release ships holds the same instances the live functions compute.
"""

from __future__ import annotations

import json
import math
import re

import pytest

from grader.drill import bank, instances, quantities, solutions
from grader.drill.template import TOPICS, run_total

N = 200
TEMPLATES = bank.all_templates()
ZERO_COUNT = re.compile(r"\b(?:first|last) 0 |前 0 个")  # "the first 0 tokens' KV": say "none" instead


def test_the_bank_loads_with_unique_ids_and_declared_topics() -> None:
    templates, designs = bank.load()
    assert templates and designs, "grader/drill/bank/ declares no templates or no system-design questions"
    assert {t.topic for t in templates} <= set(TOPICS)
    assert all(any(p.checkable for p in d.points) for d in designs), "every rubric needs a point the grader checks"


@pytest.mark.parametrize("t", TEMPLATES, ids=lambda t: t.id)
def test_template_proof(t) -> None:
    assert solutions.available(t.solution), f"{t.id}: solutions/{t.solution[0]}/{t.solution[1]}.py is missing"
    fn = solutions.function(t.solution)
    for seed in range(N):
        inst = instances.make(t, seed)
        where = f"{t.id} seed {seed} (params {inst.params})"
        json.dumps(inst.to_json())  # the bank data file must hold it
        assert inst.answer == t.answer(inst.params, fn), f"{where}: the answer is not the solution function's"
        assert inst.prompt.strip() and "{" not in inst.prompt, f"{where}: prompt not rendered: {inst.prompt!r}"
        assert not ZERO_COUNT.search(inst.prompt), f"{where}: a count of zero reads wrong: {inst.prompt!r}"
        if t.kind == "numeric":
            _numeric(t, inst, where)
        elif t.kind == "choice":
            assert inst.answer in inst.options, f"{where}: the answer {inst.answer!r} is not one of the options"
            i = inst.options.index(inst.answer)
            assert quantities.check_choice(quantities.LETTERS[i], inst.options, inst.answer).right
            wrong = quantities.LETTERS[(i + 1) % len(inst.options)]
            assert not quantities.check_choice(wrong, inst.options, inst.answer).right, f"{where}: options repeat"
        else:
            assert sorted(inst.answer) == sorted(inst.options), f"{where}: the answer is not an order of the options"
            typed = " ".join(quantities.LETTERS[inst.options.index(a)] for a in inst.answer)
            assert quantities.check_order(typed, inst.options, inst.answer).right


def _numeric(t, inst, where: str) -> None:
    answer = float(inst.answer)
    total = run_total(inst.steps)
    assert math.isclose(total, answer, rel_tol=1e-9, abs_tol=1e-300), (
        f"{where}: the derivation adds up to {total!r}, the solution function says {answer!r}: fix the steps")
    for u in (*t.accept, t.unit_of_answer if t.unit_of_answer not in ("1", "ratio") else ""):
        typed = quantities.in_unit(answer, t.unit_of_answer, u) if u else f"{answer:.6g}"
        verdict = quantities.check(typed, answer, t.unit_of_answer, t.rtol, t.accept)
        assert verdict.right, f"{where}: {typed!r} rejected ({verdict.message})"
    if answer:
        off = quantities.in_unit(answer * 1.5, t.unit_of_answer, t.accept[0] if t.accept else t.unit_of_answer)
        verdict = quantities.check(off, answer, t.unit_of_answer, t.rtol, t.accept)
        assert verdict.kind == "wrong_number", f"{where}: {off!r} (1.5× the answer) was judged {verdict.kind}"


def test_the_bank_data_file_is_fresh() -> None:
    """`grader drill build` must be rerun when a template or a solution changes: the release serves this file."""
    stored = instances.bank_data()
    missing = [t.id for t in TEMPLATES if not stored.get(t.id)]
    assert not missing, f"no instances in {instances.DATA_FILE.name} for {missing}: run `python -m grader drill build`"
    for t in TEMPLATES:
        for seed, d in enumerate(stored[t.id][:3]):
            live_one = instances.make(t, seed).to_json()
            assert json.loads(json.dumps(live_one)) == d, (
                f"{t.id} seed {seed}: the bank data file differs from the live solution: run `python -m grader "
                "drill build` and commit grader/drill/bank_data.json.gz")


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_l35_kv_transfer_never_reads_first_0_tokens(lang, monkeypatch) -> None:
    """A decode node with nothing cached is said to hold none of the KV (both languages, live and from the bank)."""
    monkeypatch.setenv("DRIPSTONE_LANG", lang)
    t = next(t for t in TEMPLATES if t.id == "l35.kv_transfer_bytes")
    drawn = [t.params(instances.rng_for(t, seed)) for seed in range(500)]
    drawn += [d["params"] for d in instances.bank_data()[t.id]]  # what a release serves, rendered in this language
    assert {p["cached"] == 0 for p in drawn} == {True, False}, "the draw should cover both cases"
    for p in drawn:
        text = t.render(p)
        assert "first 0" not in text and "前 0 个" not in text and not ZERO_COUNT.search(text), text
        if p["cached"] == 0:
            assert ("holds none of its KV" if lang == "en" else "尚未持有其任何 KV") in text, text
    for d in instances.bank_data()[t.id]:
        assert "first 0 tokens" not in d["prompt"], f"stale bank data: {d['prompt']!r}"
