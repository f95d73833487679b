"""The learner's language: the catalogs hold a translation of every learner-facing string, Chinese texts keep the
numbers, code and placeholders of the English ones, and the language follows DRIPSTONE_LANG or the locale."""

from __future__ import annotations

import functools
import re
import string
import tomllib

import pytest

from grader import api, i18n
from grader.authoring import catalog
from grader.core.target import REPO_ROOT
from grader.learner import hints

UNITS = api.all_units()
TRANSLATED = [u for u in UNITS if (REPO_ROOT / "solutions" / u / "README.zh.md").is_file()]
NUMBER = re.compile(r"(?<![\w.])\d[\d,.]*\d|(?<![\w.])\d")
CODE = re.compile(r"`([^`]+)`")  # a span may wrap across lines: compared with its whitespace collapsed


def _fields(text: str) -> list[str]:
    return sorted(f for _, f, _, _ in string.Formatter().parse(text) if f is not None)


FENCED = re.compile(r"^```.*?^```", re.S | re.M)  # code blocks: their comments may be translated


def _spans(text: str) -> set[str]:
    return {" ".join(span.split()) for span in CODE.findall(FENCED.sub("", text))}


def _numbers(text: str) -> set[str]:
    return {n.replace(",", "") for n in NUMBER.findall(text)}


@functools.cache
def _manifest() -> dict[str, list[tuple[str, str]]]:
    out: dict[str, list[tuple[str, str]]] = {u: [] for u in TRANSLATED}
    for t in api.manifest(TRANSLATED) if TRANSLATED else []:
        if t.get("hint"):
            out[str(t["unit"])].append((str(t["hint"]), str(t["nodeid"])))
    return out


def test_every_learner_facing_string_of_the_grader_is_translated():
    strings = list(catalog.grader_strings())
    assert len(strings) > 20, "the grader's learner-facing strings are marked with _() or N_()"
    gaps = catalog.missing(i18n.catalog_path(), strings)
    assert not gaps, ("no Chinese for these strings: run `python -m grader.authoring.catalog extract`, translate "
                      "them in grader/locale/zh.po\n  " + "\n  ".join(gaps[:30]))


def test_translations_keep_placeholders_numbers_and_code():
    for path in [i18n.catalog_path()] + [i18n.catalog_path(u) for u in UNITS]:
        for msgid, msgstr in i18n._read(path).items():
            where = f"{path.relative_to(REPO_ROOT)}: {msgid!r}"
            assert _fields(msgstr) == _fields(msgid), f"{where}: placeholders {_fields(msgid)} must stay"
            assert _numbers(msgid) <= _numbers(msgstr), f"{where}: numbers {_numbers(msgid) - _numbers(msgstr)}"
            assert _spans(msgid) <= _spans(msgstr), f"{where}: code spans must stay"


@pytest.mark.parametrize("unit", TRANSLATED)
def test_a_translated_unit_has_every_text_in_chinese(unit):
    sol, ex = REPO_ROOT / "solutions" / unit, REPO_ROOT / "exercises" / unit
    english, chinese = (sol / "README.md").read_text(), (sol / "README.zh.md").read_text()
    lost = sorted(_numbers(english) - _numbers(chinese))
    assert not lost, f"{unit}/README.zh.md lacks numbers of README.md: {lost[:20]}"
    spans = sorted(_spans(english) - _spans(chinese))
    assert not spans, f"{unit}/README.zh.md lacks code spans of README.md: {spans[:20]}"
    assert "(README.md)" in chinese, f"{unit}/README.zh.md links back to README.md"
    levels = hints.read_hints(sol / "HINTS.toml")
    zh = hints.read_hints(sol / "HINTS.zh.toml")
    assert {e: sorted(v) for e, v in zh.items()} == {e: sorted(v) for e, v in levels.items()}, (
        f"{unit}/HINTS.zh.toml must have the exercises and levels of HINTS.toml")
    assert all(v[1].rstrip().endswith(("?", "？")) for v in zh.values()), f"{unit}: level 1 asks a question"
    tomllib.loads((sol / "HINTS.zh.toml").read_text())
    for name in ("README.zh.md", "HINTS.zh.toml"):
        assert (ex / name).read_text() == (sol / name).read_text(), "run `python -m grader stubs`"
    gaps = catalog.missing(i18n.catalog_path(unit), _manifest()[unit])
    assert not gaps, (f"test hints without Chinese (python -m grader.authoring.catalog extract {unit}):\n  "
                      + "\n  ".join(gaps))


def test_the_language_follows_dripstone_lang_then_the_locale(monkeypatch):
    for var in ("DRIPSTONE_LANG", "LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(var, raising=False)
    assert i18n.language() == "en"
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    assert i18n.language() == "zh"
    monkeypatch.setenv("LC_ALL", "C.UTF-8")  # LC_ALL wins over LANG, as in POSIX
    assert i18n.language() == "en"
    monkeypatch.setenv("DRIPSTONE_LANG", "zh")
    assert i18n.language() == "zh"
    monkeypatch.setenv("DRIPSTONE_LANG", "en")
    monkeypatch.setenv("LC_ALL", "zh_TW.UTF-8")
    assert i18n.language() == "en"


def test_speaking_overrides_the_language_in_this_thread_only(monkeypatch):
    import threading

    monkeypatch.setenv("DRIPSTONE_LANG", "zh")
    seen = []
    with i18n.speaking("en"):
        assert i18n.language() == "en"
        other = threading.Thread(target=lambda: seen.append(i18n.language()))
        other.start()
        other.join()
    assert seen == ["zh"] and i18n.language() == "zh"


def test_text_without_a_translation_stays_english_and_english_is_never_translated(monkeypatch):
    some = next(iter(i18n._read(i18n.catalog_path()).items()))
    monkeypatch.setenv("DRIPSTONE_LANG", "en")
    assert i18n._(some[0]) == some[0]
    monkeypatch.setenv("DRIPSTONE_LANG", "zh")
    assert i18n._(some[0]) == some[1] != some[0]
    assert i18n._("a sentence no catalog has") == "a sentence no catalog has"
    readme = REPO_ROOT / "solutions" / (TRANSLATED[0] if TRANSLATED else "l23_online_softmax") / "README.md"
    assert i18n.localized(readme).name == ("README.zh.md" if TRANSLATED else "README.md")
    monkeypatch.setenv("DRIPSTONE_LANG", "en")
    assert i18n.localized(readme) == readme


def test_a_chinese_learner_reads_the_scoreboard_and_the_report_in_chinese(monkeypatch):
    import io

    from rich.console import Console

    from grader.core.results import GradeReport, Status, TestResult, Tier
    from grader.learner import report, scoreboard

    def result(name: str, status: Status, score: float, **kw) -> TestResult:
        return TestResult(nodeid=f"tests/l12_roofline/t.py::{name}", unit="l12_roofline", exercise="ridge_point",
                          tier=Tier.CORRECTNESS, points=2, status=status, score=score, **kw)

    run = GradeReport("exercises", (result("test_ok", Status.PASSED, 2),
                                    result("test_bad", Status.FAILED, 0, message="ridge_point(1, 2) = 2, expected 0.5",
                                           hint=next(iter(i18n._read(i18n.catalog_path())))),))
    monkeypatch.setenv("DRIPSTONE_LANG", "zh")
    out = io.StringIO()
    scoreboard.render(run, Console(file=out, width=200, color_system=None))
    text = out.getvalue()
    assert "正在评分" in text and "失败" in text and "下一步" in text and "总分" in text, text
    assert "ridge_point(1, 2) = 2, expected 0.5" in text, "the test's own numbers are shown as written"
    page = report.page(run, run, when="now")
    assert "lang='zh-CN'" in page and "Noto Sans CJK SC" in page and "课程进度" in page
    # what a learner looks at first: the next step and the course progress, the per-test rows folded below
    assert page.index("下一步") < page.index("课程进度") < page.index("计分板") and "<details" in page
    monkeypatch.setenv("DRIPSTONE_LANG", "en")
    assert "lang='en'" in report.page(run, run, when="now")


ZH_PARAGRAPH = ("对一个 70B 参数模型做混合精度 Adam 训练（bf16 权重和梯度，fp32 主权重，m 和 v），"
                "不分片：静态显存是多少？"
                "预填充节点把一个 32768 个 token 的 prompt 交给尚未持有其任何 KV 的解码节点（没有缓存前缀）。"
                "有多少字节经过网络？换行按终端列宽计算：一个汉字占两列，而 textwrap 按字符数计算。")


@pytest.mark.parametrize("width", [16, 23, 40, 61, 100])
def test_wrap_counts_terminal_columns_not_characters(width):
    import textwrap

    lines = i18n.wrap(ZH_PARAGRAPH, width).split("\n")
    assert max(i18n.columns(line) for line in lines) <= width, lines
    assert "".join(lines).replace(" ", "") == ZH_PARAGRAPH.replace(" ", ""), "nothing lost or reordered"
    assert not any(line[:1] in "，。、：；？！）" for line in lines), "Chinese punctuation never starts a line"
    assert len(lines) > 1 and min(i18n.columns(line) for line in lines[:-1]) >= width - 12, "lines are filled"
    assert max(i18n.columns(line) for line in textwrap.wrap(ZH_PARAGRAPH, width)) > width  # what it replaces


def test_wrap_and_pad_leave_latin_text_as_textwrap_and_format_do():
    import textwrap

    english = ("A 70B-parameter model trained with mixed precision Adam (bf16 weights and gradients, fp32 master "
               "weights, m and v), no sharding: how much static memory (weights + gradients + optimizer states)?")
    for width in (30, 57, 100):
        assert i18n.wrap(english, width) == textwrap.fill(english, width)
    assert i18n.wrap("one\n\ntwo", 10) == "one\n\ntwo"
    assert i18n.wrap("abcdefghij", 4) == "abcd\nefgh\nij", "a word longer than the line is cut"
    assert i18n.columns("通过") == 4 and i18n.pad("通过", 11) == "通过" + " " * 7
    assert i18n.pad("PASS", 11) == f"{'PASS':<11}"
