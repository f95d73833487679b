"""grader drill in Chinese (DRIPSTONE_LANG=zh): questions, derivations, verdicts and reports translated from the
catalog at render time, the numbers, units and identifiers unchanged, and answers scored the same in both languages."""

from __future__ import annotations

import io
import re

import pytest

from grader.drill import bank, instances, quantities, session
from grader.drill.store import Store
from grader.i18n import _ as translate

CJK = re.compile(r"[\u4e00-\u9fff]")
NUMBER = re.compile(r"\d+(?:\.\d+)?")


def _run(tmp_path, lang: str, answers: list[str], monkeypatch, **options) -> tuple[dict, str]:
    monkeypatch.setenv("DRIPSTONE_LANG", lang)
    out = io.StringIO()
    run = session.Session(session.Options(**options), session.Scripted(answers, out),
                          Store(tmp_path / f"{lang}.sqlite3"))
    return run.run(), out.getvalue()


def test_a_chinese_session_reads_chinese_and_scores_like_the_english_one(tmp_path, monkeypatch) -> None:
    typed = ["112 GB", "3 days", "", "1 GB", "0.5 GiB"]
    zh_typed = ["１１２ ＧＢ", "3 天", "", "约 1 GB", "0.5 GiB"]  # a Chinese input method's forms
    en, en_out = _run(tmp_path, "en", typed + ["q"], monkeypatch, topics=("memory",), n=5, seed=3)
    zh, zh_out = _run(tmp_path, "zh", zh_typed + ["q"], monkeypatch, topics=("memory",), n=5, seed=3)
    assert [q["question"] for q in zh["questions"]] == [q["question"] for q in en["questions"]]
    assert [(q["verdict"], q["correct"], q["expected"]) for q in zh["questions"]] == \
        [(q["verdict"], q["correct"], q["expected"]) for q in en["questions"]], "the same answers score the same"
    assert {q["verdict"] for q in en["questions"]} >= {"wrong_unit", "skipped"}
    # every line a learner reads is Chinese: header, question, verdict, derivation, Leitner box, report
    for text in ("面试演练", "回答时带上单位", "难度", "推导", "莱特纳盒", "练习报告", "按主题", "已跳过：答案是"):
        assert text in zh_out, f"{text!r} missing from the Chinese session:\n{zh_out[:2000]}"
    for text in ("Derivation", "Leitner", "Session report", "difficulty", "skipped: the answer is"):
        assert text in en_out and text not in zh_out, text
    en_blocks, zh_blocks = _questions(en_out), _questions(zh_out)
    assert list(zh_blocks) == [q["question"] for q in zh["questions"]]
    for qid, (question, steps) in zh_blocks.items():
        assert CJK.search(question), f"{qid}: the question is not Chinese: {question!r}"
        assert steps and all(CJK.search(s) or not re.search(r"[a-z]{4,}\s[a-z]{4,}", s) for s in steps), steps
        # the same numbers as the English question: parameters, units and identifiers are not translated
        assert sorted(NUMBER.findall(question)) == sorted(NUMBER.findall(en_blocks[qid][0])), (question, en_blocks[qid])


def _questions(out: str) -> dict[str, tuple[str, list[str]]]:
    """question id -> (the question's text, its derivation lines) of a session's output."""
    found = {}
    for block in out.split("\n\n"):
        lines = block.splitlines()
        head = re.match(r"⏱ \S+  Q\d+/\d+ · .* · (\S+)$", lines[0]) if lines else None
        if head:
            end = next(i for i, line in enumerate(lines) if line.startswith("[⏱"))
            start = next(i for i, line in enumerate(lines) if re.match(r"  (Derivation|推导)", line))
            found[head[1]] = (" ".join(lines[1:end]), lines[start + 1:-2])
    return found


def test_wrong_unit_and_right_verdicts_in_chinese(monkeypatch) -> None:
    monkeypatch.setenv("DRIPSTONE_LANG", "zh")
    accept = ("GB", "GiB", "TB", "B")
    right = quantities.check("140 GB", 140e9, "B", 0.01, accept)
    wrong_unit = quantities.check("140 GiB", 140e9, "B", 0.01, accept)
    wrong = quantities.check("150 GB", 140e9, "B", 0.01, accept)
    assert (right.kind, wrong_unit.kind, wrong.kind) == ("right", "wrong_unit", "wrong_number")
    assert right.message.startswith("正确") and "140 GB" in right.message
    assert "数值在 GB 下是对的，不是 GiB" in wrong_unit.message and "GiB = 2^30 B" in wrong_unit.message
    assert wrong.message.startswith("数值错误")
    assert quantities.check("140 ms", 140e9, "B", 0.01, accept).message.startswith("'ms' 度量的是时间")


@pytest.mark.parametrize(("typed", "ascii_form"), [
    ("１４０ ＧＢ", "140 GB"), ("３／１９", "3/19"), ("2.5 毫秒", "2.5 ms"), ("38.4 天", "38.4 days"),
    ("约 130.4 GiB", "130.4 GiB"), ("１，０２４ tokens", "1,024 tokens"),
])
def test_answers_parse_the_same_in_both_languages(typed, ascii_form) -> None:
    assert quantities.parse(typed) == quantities.parse(ascii_form)


def test_every_template_renders_its_question_and_derivation_in_chinese(monkeypatch) -> None:
    """Each template's prompt and every derivation label have a catalog entry: rendered from the same parameters,
    the Chinese text has the English text's numbers, and the derivation's values are the same."""
    untranslated = []
    for t in bank.all_templates():
        stored = instances.bank_data()[t.id][:3]
        for d in stored:
            inst = instances.Instance.from_json(d)
            monkeypatch.setenv("DRIPSTONE_LANG", "en")
            en_prompt, en_steps = session.shown_prompt(t, inst), [s.text() for s in inst.steps]
            en_again = t.render(inst.params)
            monkeypatch.setenv("DRIPSTONE_LANG", "zh")
            zh_prompt, zh_steps = session.shown_prompt(t, inst), [s.text() for s in inst.steps]
            assert en_prompt == inst.prompt == en_again, f"{t.id}: rendered again from the stored params"
            if not CJK.search(zh_prompt):
                untranslated.append(f"{t.id}: {zh_prompt}")
            assert set(NUMBER.findall(en_prompt)) <= set(NUMBER.findall(zh_prompt)), (t.id, en_prompt, zh_prompt)
            for e, z in zip(en_steps, zh_steps, strict=True):
                if e == z and re.search(r"[a-z]{3,} [a-z]{3,}", e):
                    untranslated.append(f"{t.id} step: {e}")
                assert set(NUMBER.findall(e)) <= set(NUMBER.findall(z)), (t.id, e, z)
    assert not untranslated, "\n".join(untranslated[:20])


def test_system_design_prompt_rubric_and_options_in_chinese(tmp_path, monkeypatch) -> None:
    d = bank.all_designs()[0]
    answer = "py-spy dump on every rank; NCCL_DEBUG=INFO; MAD; Xid in dmesg; PFC; cordon and resume from checkpoint"
    lines = [answer] + ["y"] * sum(1 for p in d.points if not p.checkable)
    monkeypatch.setattr(session, "_designs", lambda topics: [d])
    report, out = _run(tmp_path, "zh", lines, monkeypatch, n=0, designs=1, seed=1)
    assert "系统设计 1/1" in out and "评分要点" in out and "（自动检查）" in out and "（自评）" in out, out[:1500]
    assert CJK.search(out.split("系统设计 1/1")[1].splitlines()[1]), "the design prompt is Chinese"
    monkeypatch.setenv("DRIPSTONE_LANG", "en")
    en_report, _ = _run(tmp_path / "en", "en", lines, monkeypatch, n=0, designs=1, seed=1)
    assert report["questions"][0]["verdict"] == en_report["questions"][0]["verdict"]


def test_choice_options_are_shown_translated_and_answered_by_letter(tmp_path, monkeypatch) -> None:
    t = next(t for t in bank.all_templates() if t.id == "l05.permute_contiguous")
    inst = instances.Instance.from_json(instances.bank_data()[t.id][0])
    monkeypatch.setenv("DRIPSTONE_LANG", "zh")
    out = io.StringIO()
    s = session.Session(session.Options(), session.Scripted([quantities.LETTERS[inst.options.index(inst.answer)]], out),
                        Store(tmp_path / "h.sqlite3"))
    s._ask(t, inst, "Q1/1", session.Clock(None), s.store.start_session("drill", 1, "bank"))
    text = out.getvalue()
    assert "a) 连续" in text and "b) 不连续" in text and "正确：" in text, text


def test_a_design_answered_in_chinese_scores_the_checked_points_an_english_one_does() -> None:
    from grader.drill import rubric

    d = next(d for d in bank.all_designs() if d.id == "l44.nccl_watchdog_triage")
    en = ("py-spy dump every rank; same call site everywhere means a straggler, different call sites mean "
          "divergence; NCCL_DEBUG=INFO; median and MAD; Xid in dmesg; PFC pause on RoCE; cordon the node and resume "
          "from the checkpoint; the flight recorder")
    zh = ("先用 py-spy 转储每个 rank 的调用栈；所有 rank 停在同一调用位置说明是慢节点，调用位置不同说明控制流分叉；"
          "开 NCCL_DEBUG=INFO；用中位数和 MAD；看 dmesg 里的 Xid；查 RoCE 交换机的 PFC；隔离节点并从检查点恢复；"
          "打开 NCCL 飞行记录器")
    checked = [p for p in d.points if p.checkable]
    assert [rubric.check(p, zh) for p in checked] == [rubric.check(p, en) for p in checked] == [True] * len(checked)
    assert not rubric.check(checked[1], "先转储调用栈")  # a Chinese answer still has to name the point
    plan = next(d for d in bank.all_designs() if d.id == "l44.plan_405b_1024_h100")
    memory = next(p for p in plan.points if p.numbers and p.unit_of_answer == "B")
    assert rubric.check(memory, "静态显存约30GB（TP8 PP8 DP16，ZeRO-1）") and rubric.check(memory, "about 30 GB")
    assert rubric.check(memory, "静态显存约３０ ＧＢ")


def test_chinese_words_skip_and_quit(tmp_path, monkeypatch) -> None:
    report, out = _run(tmp_path, "zh", ["跳过", "退出"], monkeypatch, n=5, seed=2)
    assert report["asked"] == 1 and report["questions"][0]["verdict"] == "skipped", out[-800:]


def test_history_stores_english_and_the_csv_shows_the_learners_language(tmp_path, monkeypatch) -> None:
    """The history holds the template id, its parameters and the English text (a live Chinese session too); the CSV
    export renders the question, and a choice's expected option, again in the reader's language."""
    import csv
    import sqlite3

    from grader.drill.bank import examples

    monkeypatch.setenv("DRIPSTONE_LANG", "zh")
    choice = next(t for t in bank.all_templates() if t.id == "l05.permute_contiguous")
    served = instances.Instance.from_json(instances.bank_data()[choice.id][0])
    live = instances.make(examples.STATIC_MEMORY, 7)  # drawn in a Chinese session, with solutions/
    assert not CJK.search(live.prompt), "an instance's own text is English, whatever the language"
    store = Store(tmp_path / "h.sqlite3")
    s = session.Session(session.Options(), session.Scripted(["a", "140 GB"], io.StringIO()), store)
    sid = store.start_session("drill", 1, "live")
    s._ask(choice, served, "Q1/2", session.Clock(None), sid)
    s._ask(examples.STATIC_MEMORY, live, "Q2/2", session.Clock(None), sid)
    assert all(CJK.search(r["prompt"]) for r in s.results), "the session report holds the question as it was read"
    stored = [r[0] for r in sqlite3.connect(store.path).execute("SELECT prompt FROM attempts ORDER BY id")]
    assert stored == [served.prompt, live.prompt] and not any(CJK.search(p) for p in stored), stored

    zh = list(csv.DictReader(io.StringIO(store.export_csv())))
    assert [r["prompt"] for r in zh] == [choice.render(served.params), examples.STATIC_MEMORY.render(live.params)]
    assert all(CJK.search(r["prompt"]) for r in zh), zh
    assert zh[0]["expected"] in ("连续", "不连续") and zh[1]["expected"] == session._expected(examples.STATIC_MEMORY,
                                                                                             live)
    monkeypatch.setenv("DRIPSTONE_LANG", "en")
    en = list(csv.DictReader(io.StringIO(store.export_csv())))
    assert [r["prompt"] for r in en] == stored and en[0]["expected"] == served.answer
    assert [{k: v for k, v in r.items() if k not in ("prompt", "expected")} for r in en] == \
        [{k: v for k, v in r.items() if k not in ("prompt", "expected")} for r in zh], "the other columns: one language"


def test_an_older_history_file_still_exports(tmp_path, monkeypatch) -> None:
    """Rows written before (a Chinese text from a live session, parameters missing, unreadable or no longer fitting
    the template, a question since removed, a design) export without a crash, every row kept."""
    import csv
    import sqlite3

    path = tmp_path / "old.sqlite3"
    Store(path).close()
    db = sqlite3.connect(path)
    design = bank.all_designs()[0]
    old = [("l27.static_training_memory", "numeric", "一个 7B 参数的模型……", "{}"),  # no parameters
           ("l27.static_training_memory", "numeric", "A 7B model: how much?", '{"unknown": 1}'),  # no longer fit
           ("gone.template", "numeric", "A question since removed", None),
           ("l05.permute_contiguous", "choice", "Is it contiguous?", "not json"),
           (design.id, "design", design.prompt, "{}")]
    for q, kind, prompt, params in old:
        db.execute("INSERT INTO attempts (session, question, kind, topic, prompt, params, expected, correct, seconds)"
                   " VALUES (1, ?, ?, 'memory', ?, ?, 'contiguous', 0, 1.0)", (q, kind, prompt, params))
    db.commit()
    db.close()
    for lang in ("en", "zh"):
        monkeypatch.setenv("DRIPSTONE_LANG", lang)
        rows = list(csv.DictReader(io.StringIO(Store(path).export_csv())))
        assert len(rows) == len(old)
        assert [r["prompt"] for r in rows[:3]] == [p for _q, _k, p, _p in old[:3]], "the recorded text, as it was"
        assert rows[4]["prompt"] == (design.prompt if lang == "en" else translate(design.prompt))
        assert CJK.search(rows[4]["prompt"]) if lang == "zh" else not CJK.search(rows[4]["prompt"])


@pytest.mark.parametrize("terminal", [None, 60])
def test_a_chinese_question_wraps_to_the_terminal_columns(tmp_path, monkeypatch, terminal) -> None:
    """A Chinese character takes two columns: the longest Chinese question fits session.WIDTH columns, and a
    narrower terminal's (COLUMNS=60: 59 columns, the last one left free)."""
    from grader.i18n import columns

    monkeypatch.setenv("DRIPSTONE_LANG", "zh")
    if terminal:
        monkeypatch.setenv("COLUMNS", str(terminal))
    else:
        monkeypatch.delenv("COLUMNS", raising=False)
    fits = terminal - 1 if terminal else session.WIDTH
    shown = {(t, d["template"]): session.shown_prompt(t, instances.Instance.from_json(d))
             for t in bank.all_templates() if t.kind == "numeric" for d in instances.bank_data()[t.id][:1]}
    (t, _id), text = max(shown.items(), key=lambda kv: columns(kv[1]))
    assert columns(text) > 2 * session.WIDTH, "a question long enough to wrap"
    inst = instances.Instance.from_json(instances.bank_data()[t.id][0])
    out = io.StringIO()
    s = session.Session(session.Options(), session.Scripted([""], out), Store(tmp_path / "h.sqlite3"))
    s._ask(t, inst, "Q1/1", session.Clock(None), s.store.start_session("drill", 1, "bank"))
    lines = out.getvalue().splitlines()
    question = lines[2:next(i for i, line in enumerate(lines) if line.startswith("[⏱"))]
    assert len(question) > 2 and "".join(question).replace(" ", "") == text.replace(" ", ""), question
    assert max(columns(line) for line in question) <= fits, [columns(line) for line in question]
    assert max(columns(line) for line in question) > fits - 6, "the lines fill the width"
