"""Which questions a session asks: due cards first (missed ones come back next session), then new ones."""

from __future__ import annotations

import random
from collections.abc import Sequence

from grader.drill.store import Card
from grader.drill.template import Design, Template


def pick(templates: Sequence[Template], cards: dict[str, Card], session: int, n: int,
         rng: random.Random) -> list[Template]:
    """``n`` templates for session number ``session``: due (lowest box first), then unseen, then the soonest due;
    when fewer than ``n`` templates match, they come round again (each time with new parameters)."""
    pool = list(templates)
    rng.shuffle(pool)  # ties break by the seed
    due = sorted((t for t in pool if t.id in cards and cards[t.id].due <= session),
                 key=lambda t: (cards[t.id].box, cards[t.id].due))
    new = _spread([t for t in pool if t.id not in cards])
    later = sorted((t for t in pool if t.id in cards and cards[t.id].due > session),
                   key=lambda t: (cards[t.id].due, cards[t.id].box))
    order = due + new + later
    while order and len(order) < n:  # a small pool (one --topic): the same templates again, new parameters
        order += order[: n - len(order)]
    return order[:n]


def _spread(templates: list[Template]) -> list[Template]:
    """Round-robin over topics so a session of new questions mixes them."""
    by: dict[str, list[Template]] = {}
    for t in templates:
        by.setdefault(t.topic, []).append(t)
    out: list[Template] = []
    while any(by.values()):
        for topic in list(by):
            if by[topic]:
                out.append(by[topic].pop(0))
    return out


def mock(templates: Sequence[Template], cards: dict[str, Card], session: int, n: int,
         rng: random.Random) -> list[Template]:
    """A mock interview's numeric part: ``n`` questions over mixed topics, rising difficulty."""
    chosen = pick(templates, cards, session, n, rng)
    return sorted(chosen, key=lambda t: t.difficulty)  # stable: topic mix kept within a difficulty


def mock_designs(designs: Sequence[Design], k: int, rng: random.Random) -> list[Design]:
    """The system-design part: L44's questions first, then others, ``k`` in all."""
    pool = list(designs)
    rng.shuffle(pool)
    return sorted(pool, key=lambda d: d.unit != "l44_interview")[:k]
