"""Instances of templates: parameters drawn, answer from the graded function, derivation; and the bank data file.

``grader drill build`` (course authors, with solutions/) writes N instances of every template into
:data:`DATA_FILE`; the release ships it, and :func:`draw` serves from it when solutions/ is absent.
"""

from __future__ import annotations

import gzip
import json
import random
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from grader.drill import solutions
from grader.drill.template import Params, Step, Template
from grader.i18n import speaking

DATA_FILE = Path(__file__).with_name("bank_data.json.gz")
FORMAT = 1


@dataclass(frozen=True)
class Instance:
    template: str
    params: Params
    prompt: str
    answer: Any  # a number in the template's unit_of_answer; the right option; the options in order
    steps: tuple[Step, ...]
    options: tuple[str, ...] = ()
    source: str = "live"  # "live" (solutions/) or "bank" (the data file)

    def to_json(self) -> dict[str, Any]:
        steps = [[s.op, s.label, s.value, s.unit, *([s.args] if s.args else [])] for s in self.steps]
        return {"template": self.template, "params": self.params, "prompt": self.prompt, "answer": self.answer,
                "steps": steps, "options": list(self.options)}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Instance:
        return cls(d["template"], d["params"], d["prompt"], d["answer"], tuple(Step(*s) for s in d["steps"]),
                   tuple(d.get("options") or ()), "bank")


def rng_for(t: Template, seed: int) -> random.Random:
    return random.Random(f"{t.id}#{seed}")


def make(t: Template, seed: int) -> Instance:
    """Instance ``seed`` of ``t``, computed with the live solution function; its text in English, whatever the
    learner's language, like the bank data file's (the session shows it again in the learner's language)."""
    with speaking("en"):
        p = t.params(rng_for(t, seed))
        answer = t.answer(p, solutions.function(t.solution))
        if t.kind == "numeric":
            answer = answer if isinstance(answer, int) else float(answer)  # exact ints stay exact (JSON holds them)
        elif t.kind == "order":
            answer = list(answer)
        options = tuple(t.options(p)) if t.options else ()
        return Instance(t.id, p, t.render(p), answer, tuple(t.derivation(p)), options)


@cache
def bank_data(path: Path = DATA_FILE) -> dict[str, list[dict[str, Any]]]:
    if not path.is_file():
        return {}
    with gzip.open(path, "rt", encoding="utf-8") as f:
        data = json.load(f)
    if data.get("format") != FORMAT:
        raise ValueError(f"{path}: bank data format {data.get('format')!r}, expected {FORMAT}: run `grader drill "
                         "build` from the course repository")
    return data["instances"]


def draw(t: Template, rng: random.Random) -> Instance | None:
    """A fresh instance of ``t``: live when its solution file exists, else one from the bank data, else None."""
    if solutions.available(t.solution):
        return make(t, rng.randrange(2**31))
    stored = bank_data().get(t.id)
    if not stored:
        return None
    return Instance.from_json(rng.choice(stored))


def servable(t: Template) -> bool:
    return solutions.available(t.solution) or bool(bank_data().get(t.id))


def build(templates: tuple[Template, ...], per_template: int, path: Path = DATA_FILE) -> dict[str, int]:
    """Precompute ``per_template`` instances of every template into ``path``; returns counts per topic."""
    out: dict[str, list[dict[str, Any]]] = {}
    per_topic: dict[str, int] = {}
    for t in templates:  # make() renders English: a Chinese session renders the text again from the params
        out[t.id] = [make(t, seed).to_json() for seed in range(per_template)]
        per_topic[t.topic] = per_topic.get(t.topic, 0) + 1
    text = json.dumps({"format": FORMAT, "per_template": per_template, "instances": out}, sort_keys=True,
                      separators=(",", ":"))
    with open(path, "wb") as raw, gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as f:
        f.write(text.encode())  # no name, mtime=0: the same bank gives the same bytes
    bank_data.cache_clear()
    return per_topic
