"""Answers as people type them: ``140 GB``, ``1.4e11``, ``130.4 GiB``, ``38.4 days``, ``3/19``, ``0.1579``, ``2.5 ms``.

:func:`parse` reads a number (decimal, exponent, ``1.4×10^11``, ``3/19``, thousands separators, a
``k/M/bn`` multiplier) and a unit; :func:`check` compares it with a template's answer and tells a
right answer from a wrong unit (GB typed for GiB, bits for bytes, ms for s, a time for a size, a bare
number that matches the answer in another unit) and from a wrong number. Conventions (CONVENTIONS.md):
GB = 1e9 B, GiB = 2^30 B, ``b`` is a bit and ``B`` a byte, FLOPs a count and FLOP/s (FLOPS) a rate.
"""

from __future__ import annotations

import math
import re
import unicodedata
from dataclasses import dataclass

from grader.i18n import N_, _

# canonical unit of a template's answer -> its dimension
CANONICAL = {"B": "bytes", "FLOP": "flops", "s": "time", "day": "time", "B/s": "bandwidth", "FLOP/s": "flop_rate",
             "1": "count", "ratio": "ratio", "USD": "money", "token/s": "token_rate"}

_DEC = {"": 1.0, "K": 1e3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18, "Z": 1e21}
_BIN = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40, "Pi": 2.0**50}


def _table() -> dict[str, tuple[str, float]]:
    t: dict[str, tuple[str, float]] = {}
    for p, f in {**_DEC, **_BIN}.items():
        t[f"{p}B"] = ("bytes", f)
        t[f"{p}B/s"] = ("bandwidth", f)
        if p in _DEC:
            t[f"{p}b"] = ("bytes", f / 8)
            t[f"{p}bit"] = ("bytes", f / 8)
            t[f"{p}b/s"] = ("bandwidth", f / 8)
            t[f"{p}bps"] = ("bandwidth", f / 8)
            t[f"{p}Bps"] = ("bandwidth", f)
            t[f"{p}bit/s"] = ("bandwidth", f / 8)
            for word in ("FLOP", "FLOPs", "flop", "flops"):
                t[f"{p}{word}"] = ("flops", f)
            for word in ("FLOP/s", "FLOPs/s", "FLOPS", "flop/s", "flops/s"):
                t[f"{p}{word}"] = ("flop_rate", f)
    t.pop("kb", None)
    t.update({"byte": ("bytes", 1.0), "bytes": ("bytes", 1.0), "bit": ("bytes", 0.125), "bits": ("bytes", 0.125)})
    for names, f in ((("ns", "nanoseconds"), 1e-9), (("us", "µs", "μs", "microseconds"), 1e-6),
                     (("ms", "milliseconds", "msec"), 1e-3), (("s", "sec", "secs", "second", "seconds"), 1.0),
                     (("min", "mins", "minute", "minutes"), 60.0), (("h", "hr", "hrs", "hour", "hours"), 3600.0),
                     (("d", "day", "days"), 86400.0), (("week", "weeks"), 604800.0)):
        for n in names:
            t[n] = ("time", f)
    for p in ("", "k", "K", "M", "B"):
        f = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9}[p]
        for word in ("tokens/s", "token/s", "tok/s", "tokens/sec"):
            t[f"{p}{word}" if not p else f"{p} {word}"] = ("token_rate", f)
            t[f"{p}{word}"] = ("token_rate", f)
    t.update({"%": ("ratio", 0.01), "percent": ("ratio", 0.01)})
    t.update({"USD": ("money", 1.0), "dollars": ("money", 1.0), "$": ("money", 1.0)})
    return t


UNITS = _table()
_BY_DIMENSION: dict[str, list[tuple[str, float]]] = {}
for _name, (_dim, _f) in UNITS.items():
    _BY_DIMENSION.setdefault(_dim, []).append((_name, _f))
# a multiplier after the number for counts and money ("7B params", "$2.5M", "1.2k")
MULTIPLIERS = {"k": 1e3, "K": 1e3, "thousand": 1e3, "M": 1e6, "m": 1e6, "million": 1e6, "B": 1e9, "bn": 1e9,
               "billion": 1e9, "T": 1e12, "trillion": 1e12}
NOUNS = {"tokens", "token", "steps", "step", "params", "parameters", "gpus", "gpu", "nodes", "node", "ranks",
         "requests", "sequences", "layers", "heads", "times", "x", "replicas", "slots", "servers", "racks"}
CANONICAL_FACTOR = {"B": 1.0, "FLOP": 1.0, "s": 1.0, "day": 86400.0, "B/s": 1.0, "FLOP/s": 1.0, "1": 1.0,
                    "ratio": 1.0, "USD": 1.0, "token/s": 1.0}

_NUM = r"[-+]?(?:\d[\d,_']*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_RE = re.compile(rf"^\s*(?P<cur>\$)?\s*(?P<num>{_NUM})"
                 rf"(?:\s*(?:[x×*]|\*\*)\s*10\s*(?:\^|\*\*)\s*(?P<pow>[-+]?\d+))?"
                 rf"(?:\s*/\s*(?P<den>{_NUM}))?\s*(?P<rest>.*?)\s*\.?\s*$")


_APPROX = re.compile(r"^\s*(?:~|≈|about|approx\.?|approximately|roughly|约|大约|大概)\s*", re.I)
# the dimensions as a learner reads them in a verdict (``_(dimension)``)
DIMENSION_NAMES = (N_("bytes"), N_("flops"), N_("time"), N_("bandwidth"), N_("flop_rate"), N_("count"), N_("ratio"),
                   N_("money"), N_("token_rate"))
# Chinese words for units a Chinese learner may type ("3 天", "2.5 毫秒")
_ZH_UNITS = {"纳秒": "ns", "微秒": "us", "毫秒": "ms", "秒": "s", "分钟": "min", "小时": "h", "天": "days",
             "周": "weeks", "字节": "B", "个": "", "步": "steps", "次": ""}


def normalize_typed(text: str) -> str:
    """Full-width digits, letters and punctuation (a Chinese input method's ``１４０ ＧＢ``, ``３／１９``, ``：``)
    as their ASCII forms, thin spaces as spaces, and a Chinese unit word as its unit."""
    text = unicodedata.normalize("NFKC", text).replace("\u2009", " ").replace("\u202f", " ").replace("。", ".")
    stripped = text.rstrip()
    for word, unit in _ZH_UNITS.items():
        if stripped.endswith(word):
            return f"{stripped[: -len(word)].rstrip()} {unit}".rstrip()
    return text


@dataclass(frozen=True)
class Quantity:
    value: float  # in the dimension's base unit (bytes, FLOPs, seconds, B/s, ...); the bare number when no unit
    dimension: str | None  # None: a bare number
    unit: str  # the unit as typed ("" when none)
    number: float  # the number as typed, before the unit


def dimension_of(unit: str) -> str | None:
    if unit in CANONICAL:
        return CANONICAL[unit]
    return UNITS[unit][0] if unit in UNITS else None


def factor(unit: str) -> float:
    return CANONICAL_FACTOR[unit] if unit in CANONICAL_FACTOR else UNITS[unit][1]


def _number(text: str) -> float:
    return float(text.replace(",", "").replace("_", "").replace("'", ""))


def parse(text: str, expect: str | None = None) -> Quantity | None:
    """A typed answer as a :class:`Quantity`, or None when it is not a number with a known unit.

    ``expect`` (a dimension) settles what is ambiguous: ``B`` is a byte, or a billion for a count.
    """
    m = _RE.match(_APPROX.sub("", normalize_typed(text)))
    if not m:
        return None
    try:
        number = _number(m["num"])
        if m["pow"]:
            number *= 10.0 ** int(m["pow"])
        if m["den"]:
            number /= _number(m["den"])
    except (ValueError, ZeroDivisionError, OverflowError):
        return None
    rest = m["rest"].strip()
    if m["cur"]:
        return _money(number, rest)
    return _with_unit(number, rest, expect)


def _money(number: float, rest: str) -> Quantity | None:
    words = rest.split()
    mult = MULTIPLIERS.get(words[0]) if words else 1.0
    if mult is None or len(words) > 1 and words[1] not in ("USD", "dollars"):
        return None
    return Quantity(number * mult, "money", "$" + rest, number)


def _with_unit(number: float, rest: str, expect: str | None) -> Quantity | None:
    if not rest:
        return Quantity(number, None, "", number)
    if expect in ("count", "money") and rest.split()[0] in MULTIPLIERS:
        words = rest.split()
        tail = " ".join(words[1:])
        if not tail or tail.lower() in NOUNS or tail in ("USD", "dollars"):
            return Quantity(number * MULTIPLIERS[words[0]], "money" if tail in ("USD", "dollars") else None,
                            rest, number)
    if rest.lower() in NOUNS:
        return Quantity(number, None, rest, number)
    compact = rest.replace(" ", "")
    for key in (rest, compact, _normalize(compact)):
        if key in UNITS:
            dim, f = UNITS[key]
            if expect == "flop_rate" and dim == "flops" and key.endswith("flops"):
                dim = "flop_rate"  # lower-case "tflops" is the rate people mean
            return Quantity(number * f, dim, rest, number)
    meanings = {UNITS[k] for k in spellings(compact)}
    if len(meanings) == 1:  # "GIB", "Days", "MS": one unit whatever the case
        dim, f = meanings.pop()
        return Quantity(number * f, dim, rest, number)
    return None


def spellings(unit: str) -> list[str]:
    """The units that read ``unit`` ignoring case ("gb" -> GB and Gb: ambiguous, b is a bit)."""
    return sorted(k for k in UNITS if k.lower() == unit.lower())


def _normalize(unit: str) -> str:
    """Common spellings: "GByte" -> "GB", "gb" stays ambiguous (lower case b is a bit)."""
    for long, short in (("Bytes", "B"), ("Byte", "B"), ("bytes", "B"), ("byte", "B"), ("sec", "s")):
        unit = unit.replace(long, short)
    return unit


@dataclass(frozen=True)
class Verdict:
    kind: str  # "right", "wrong_unit", "wrong_number", "unparsed" ("skipped": nothing typed, see session.py)
    message: str

    @property
    def right(self) -> bool:
        return self.kind == "right"


def close(a: float, b: float, rtol: float) -> bool:
    return math.isclose(a, b, rel_tol=rtol, abs_tol=1e-300)


def check(text: str, answer: float, unit: str, rtol: float, accept: tuple[str, ...] = ()) -> Verdict:
    """Compare a typed answer with ``answer`` (in the canonical ``unit``) within ``rtol``."""
    dim = CANONICAL[unit]
    want = float(answer) * factor(unit)
    shown = fmt(answer, unit, accept)
    q = parse(text, dim)
    if q is None:
        m = _RE.match(text)
        cases = spellings(m["rest"].replace(" ", "")) if m and m["rest"] else []
        which = _(" ({typed} could be {cases}: b is a bit, B a byte)").format(
            typed=repr(m["rest"]), cases=_(" or ").join(cases)) if m and len(cases) > 1 else ""
        return Verdict("unparsed", _("could not read {typed} as a number with a unit{which}: type e.g. {shown}")
                       .format(typed=repr(text.strip()), which=which, shown=shown))
    if q.dimension is None:
        return _bare(q, want, dim, unit, rtol, accept, shown)
    if q.dimension != dim:
        return Verdict("wrong_unit", _("{unit} measures {dimension}, the question asks for {wanted}: {shown}").format(
            unit=repr(q.unit), dimension=_(q.dimension), wanted=_(dim), shown=shown))
    if close(q.value, want, rtol):
        return Verdict("right", _("right: {shown}").format(shown=shown))
    for other, f in _BY_DIMENSION[dim]:
        if other != q.unit and close(q.number * f, want, rtol):
            return Verdict("wrong_unit", _("the number is right in {other}, not in {unit}: the answer is {shown} "
                                           "({hint})").format(other=other, unit=q.unit, shown=shown,
                                                              hint=_hint(q.unit, other)))
    return Verdict("wrong_number", _("wrong number: {typed} is {off} the answer, {shown}").format(
        typed=text.strip(), off=_off(q.value, want), shown=shown))


def _bare(q: Quantity, want: float, dim: str, unit: str, rtol: float, accept: tuple[str, ...],
          shown: str) -> Verdict:
    if dim == "ratio" and close(q.value / 100, want, rtol) and not close(q.value, want, rtol) and q.value > 1:
        return Verdict("wrong_unit", _("{number} reads as a fraction; a percentage needs %: the answer is {shown}")
                       .format(number=f"{q.number:g}", shown=shown))
    if close(q.value, want / factor(unit), rtol) or close(q.value, want, rtol):
        return Verdict("right", _("right: {shown}").format(shown=shown))
    for u in accept:
        if close(q.value * factor(u), want, rtol):
            return Verdict("wrong_unit", _("{number} is right in {unit}: say the unit, {shown}").format(
                number=f"{q.number:g}", unit=u, shown=shown))
    return Verdict("wrong_number", _("wrong number: {typed} is {off} the answer, {shown}").format(
        typed=f"{q.number:g}", off=_off(q.value, want / factor(unit)), shown=shown))


def _hint(typed: str, other: str) -> str:
    if UNITS[other][0] in ("bytes", "bandwidth") and typed in UNITS:
        if ("i" in typed) != ("i" in other):
            return "GB = 1e9 B, GiB = 2^30 B"
        if ("b" in typed.split("/")[0]) != ("b" in other.split("/")[0]):
            return _("b is a bit, B a byte: 8 b = 1 B")
    return f"1 {typed} = {factor(typed) / factor(other):g} {other}"


def _off(got: float, want: float) -> str:
    if want == 0 or got == 0:
        return _("not")
    r = got / want
    return f"{r:.3g}×" if r >= 1 else _("1/{r} of").format(r=f"{1 / r:.3g}")


def fmt(value: float, unit: str, accept: tuple[str, ...] = ()) -> str:
    """``value`` (in canonical ``unit``) in the first accepted unit where it reads between 1 and 1000."""
    base = float(value) * factor(unit)
    for u in accept:
        x = base / factor(u)
        if 1 <= abs(x) < 1000:
            return f"{_sig(x)} {u}"
    if accept:
        return f"{_sig(base / factor(accept[0]))} {accept[0]}"
    if unit == "ratio":
        return _sig(float(value))
    return f"{_sig(float(value))}{'' if unit == '1' else ' ' + unit}"


SHOW = {"B": ("B", "KB", "MB", "GB", "TB", "PB"), "s": ("ns", "us", "ms", "s"),
        "B/s": ("B/s", "KB/s", "MB/s", "GB/s", "TB/s"),
        "FLOP/s": ("FLOP/s", "GFLOP/s", "TFLOP/s", "PFLOP/s", "EFLOP/s")}


def show(value: float, unit: str) -> str:
    """A derivation value in a readable unit ("14 GB", "2.5 ms"); other units as given ("2.038e+19 FLOP")."""
    if unit in SHOW:
        return fmt(value, unit, tuple(reversed(SHOW[unit])))
    return f"{_sig(float(value))} {unit}".rstrip()


def in_unit(value: float, unit: str, target: str) -> str:
    """``value`` (canonical ``unit``) printed in ``target`` with 5 significant digits: "130.39 GiB"."""
    x = float(value) * factor(unit) / factor(target)
    suffix = "" if target in ("1", "ratio", "") else f" {target}"
    return f"{x:.5g}{suffix}".replace("e+", "e")


def _sig(x: float) -> str:
    if x != 0 and (abs(x) >= 1e6 or abs(x) < 1e-3):
        return f"{x:.4g}"
    if abs(x) >= 1000:
        return f"{x:,.0f}" if x == int(x) or abs(x) >= 1e4 else f"{x:,.1f}"
    return f"{x:.4g}"


LETTERS = "abcdefghij"


def _pick(token: str, options: tuple[str, ...]) -> int | None:
    token = unicodedata.normalize("NFKC", token).strip().strip(".)").lower()
    if len(token) == 1 and token in LETTERS[: len(options)]:
        return LETTERS.index(token)
    if token.isdigit() and 1 <= int(token) <= len(options):
        return int(token) - 1
    matches = [i for i, o in enumerate(options) if o.lower() == token]
    return matches[0] if matches else None


def check_choice(text: str, options: tuple[str, ...], answer: str) -> Verdict:
    """A multiple-choice answer: a letter (``b``), a number (``2``) or the option's text."""
    i = _pick(text, options)
    right = f"{LETTERS[options.index(answer)]}) {_(answer)}"
    if i is None:
        return Verdict("unparsed", _("answer with a letter a-{last}: the answer is {right}").format(
            last=LETTERS[len(options) - 1], right=right))
    if options[i] == answer:
        return Verdict("right", _("right: {shown}").format(shown=right))
    return Verdict("wrong_number", _("wrong choice {choice}: the answer is {right}").format(
        choice=f"{LETTERS[i]}) {_(options[i])}", right=right))


def check_order(text: str, options: tuple[str, ...], answer: list[str]) -> Verdict:
    """An ordering: the letters (or numbers) of every option in order, ``c a b`` or ``3,1,2``."""
    tokens = [t for t in re.split(r"[\s,;>、]+", unicodedata.normalize("NFKC", text).strip()) if t]
    picks = [_pick(t, options) for t in tokens]
    right = " ".join(LETTERS[options.index(a)] for a in answer)
    if None in picks or sorted(p for p in picks if p is not None) != list(range(len(options))):
        return Verdict("unparsed", _("give every letter once, in order (e.g. {letters}): the answer is {right}")
                       .format(letters=" ".join(LETTERS[:len(options)]), right=right))
    if [options[p] for p in picks if p is not None] == list(answer):
        return Verdict("right", _("right: {shown}").format(shown=right))
    return Verdict("wrong_number", _("wrong order: the answer is {right}").format(right=right))
