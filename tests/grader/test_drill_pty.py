"""grader drill under a real terminal (pexpect): a 10-question session and a mock interview end to end; the
history survives the restarts and brings the missed questions back first."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import subprocess
import sys

import pexpect

from grader.core.target import REPO_ROOT

BLIND = ["1 GB", "", "3 ms", "b", "12 days"]  # answers typed without reading: mostly wrong, some unparsed


def _env(data) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("EDITOR", "VISUAL")}
    return {**env, "XDG_DATA_HOME": str(data), "PYTHONDONTWRITEBYTECODE": "1", "TERM": "xterm", "COLUMNS": "120"}


def _spawn(data, *args: str) -> pexpect.spawn:
    return pexpect.spawn(sys.executable, ["-m", "grader", "drill", *args], cwd=str(REPO_ROOT), env=_env(data),
                         encoding="utf-8", timeout=90, dimensions=(40, 120))


def test_ten_questions_then_a_mock_interview_then_stats(tmp_path) -> None:
    child = _spawn(tmp_path, "--n", "10", "--seed", "5")
    child.expect(r"Drill session 1 \(10 questions")
    for i in range(1, 11):
        child.expect(rf"⏱ \d\d:\d\d  Q{i}/10 · ")
        child.expect(r"\[⏱ \d\d:\d\d\] answer \(.*\) > ")  # the clock in every prompt
        child.sendline(BLIND[i % len(BLIND)])
        child.expect(r"[✓✗] ")
        child.expect("Derivation")
        child.expect(r"Leitner: (new|box \d) → box \d, comes back")
    child.expect("Session report")
    child.expect(r"questions: \d+/10 right")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0, child.before

    mock = _spawn(tmp_path, "--mock", "--n", "4", "--seed", "8")
    mock.expect(r"Drill session 2 \(mock interview, 4 questions \+ (\d) system design")
    designs = int(mock.match.group(1))
    assert designs >= 1
    mock.expect(r"45 minutes")
    difficulties = []
    for i in range(1, 5):
        mock.expect(rf"Q{i}/4 · \w+ · difficulty (\d)")
        difficulties.append(int(mock.match.group(1)))
        mock.expect(r"answer \(.*\) > ")
        mock.sendline(BLIND[i])
    assert difficulties == sorted(difficulties), f"a mock interview rises in difficulty: {difficulties}"
    seen_designs = self_scored = 0
    while True:
        k = mock.expect([r"System design \d+/\d+", r"\[y/n\] ", "Mock interview report"])
        if k == 0:
            seen_designs += 1
            mock.expect(r"  \| ")
            mock.sendline("TP8 PP8 DP16 with ZeRO-1: about 30 GB static per GPU,")
            mock.expect(r"  \| ")
            mock.sendline("2.04e19 FLOPs per step, 48 s per step at 42% MFU.")
            mock.expect(r"  \| ")
            mock.sendline(".")
            mock.expect(r"Rubric:")
        elif k == 1:
            self_scored += 1
            mock.sendline("y" if self_scored % 2 else "n")
        else:
            break
    mock.expect(r"by difficulty: ")
    mock.expect(r"system design \S+: \d+/\d+ \(checked \d+/\d+, self-scored \d+/\d+\)")
    mock.expect(r"overall \d+% ")
    mock.expect(pexpect.EOF)
    mock.close()
    assert mock.exitstatus == 0 and seen_designs == designs and self_scored >= 1

    stats = _drill_json(tmp_path, "stats", "--json")  # a third process: the history survived both sessions
    assert stats["sessions"] == 2 and stats["answers"] == 10 + 4 + designs, stats
    exported = csv.DictReader(io.StringIO(_drill(tmp_path, "stats", "--export", "csv").stdout))
    missed = {row["question"] for row in exported if row["correct"] == "0"}
    answers = tmp_path / "one.txt"
    answers.write_text("skip\n")
    again = _drill_json(tmp_path, "--n", "1", "--seed", "99", "--answers", str(answers), "--json")
    assert again["questions"][0]["question"] in missed, "a missed question must come back first in the next session"


def _drill(data, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "grader", "drill", *args], cwd=REPO_ROOT, env=_env(data),
                          capture_output=True, text=True, timeout=120)


def _drill_json(data, *args: str) -> dict:
    proc = _drill(data, *args)
    assert proc.returncode == 0, proc.stderr
    return json.loads(re.sub(r"^[^{]*", "", proc.stdout, count=1))


def test_a_system_design_answer_written_in_the_editor(tmp_path) -> None:
    editor = tmp_path / "editor.sh"  # stands for vim: writes the answer into the file it is given
    editor.write_text("#!/bin/sh\nprintf 'TP8 PP8 DP16 with ZeRO-1, 30 GB static per GPU\\n' > \"$1\"\n")
    editor.chmod(0o755)
    env = {**_env(tmp_path), "EDITOR": str(editor)}
    child = pexpect.spawn(sys.executable, ["-m", "grader", "drill", "--n", "0", "--designs", "1", "--topic",
                                           "parallelism", "--seed", "3"], cwd=str(REPO_ROOT), env=env,
                          encoding="utf-8", timeout=90, dimensions=(40, 120))
    child.expect(r"or type 'e' alone to write it in ")
    child.expect(r"  \| ")
    child.sendline("e")
    child.expect("Rubric:")
    while child.expect([r"\[y/n\] ", r"Rubric score (\d+)/(\d+): checked (\d+)/"]) == 0:
        child.sendline("n")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    rows = list(csv.DictReader(io.StringIO(_drill(tmp_path, "stats", "--export", "csv").stdout)))
    assert [r["kind"] for r in rows] == ["design"] and rows[0]["answer"].startswith("TP8 PP8 DP16 with ZeRO-1"), rows
