"""One ``.cu`` text for both compilers: what a learner's CUDA C++ file may say to the preprocessor.

A ``.cu`` exercise is compiled twice: by g++ for the CPU executor (correctness where no GPU is lent,
grader.instrument.cuda_cpu) and by NVRTC (the efficiency tier's PTX and ptxas checks, and the GPU's runs,
grader.instrument.cuda). Both must compile the same code, or the PTX checks grade a kernel that did not run. The
compilers differ in the macros they predefine (``__CUDACC__``, ``__CUDA_ARCH__``, ``__NVCC__``, ``__CUDACC_RTC__``,
``__GNUC__``, ``__clang__``, ``__x86_64__``...), in the headers behind an ``#include`` and in their extensions, so
:func:`check` refuses, naming the line, every way a file could tell them apart in the preprocessor:

* a conditional (``#if``, ``#ifdef``, ``#ifndef``, ``#elif``...) may test only macros the file itself ``#define``\\ s
  earlier, outside any conditional group (then both compilers have it, with the same body), and the project's
  macros (:data:`PROJECT_MACROS`, defined alike for both: :func:`for_nvrtc` gives NVRTC the CPU executor's
  ``DRIPSTONE_TODO``); a macro tested by value must expand to such macros and literals only;
* ``#include`` only of the CUDA and C headers both provide (:data:`INCLUDES`), no ``#line``, no ``#pragma`` but
  ``unroll``/``nounroll``/``once``, no other directive (``#assert``, ``#ident``...);
* in the code, a reserved identifier (``__x``, ``_X``) only from the CUDA model both compilers provide (the
  names the CPU executor's headers declare, :func:`cuda_names`): no ``__FILE__``, ``__GNUC__``, ``__builtin_*``,
  ``__has_include``, ``__attribute__``, ``_Pragma``; for the CPU executor (``cpu=True``), no inline assembly.

What this does not see: C++ that tells the compilers apart through the types of the CUDA model's declarations
(``decltype(__syncthreads)``, traits of ``__half``): the executor's headers declare them as functions and structs
of their own (THREAT_MODEL.md R3.1).
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from grader.core.target import SubmissionError
from grader.i18n import _

HEADERS = Path(__file__).with_name("cuda_cpu")
PROJECT_MACROS = frozenset({"DRIPSTONE_TODO"})  # defined for both compilers (for_nvrtc, dripstone_cuda.h)
NVRTC_PRELUDE = "#define DRIPSTONE_TODO(task) __trap()\n#line 1\n"
INCLUDES = frozenset({"cuda_fp16.h", "cuda_bf16.h", "cuda_runtime.h", "cstdint", "stdint.h", "cmath", "math.h",
                      "cfloat", "float.h", "climits", "limits.h", "cstddef", "stddef.h"})
PRAGMAS = ("unroll", "nounroll", "once")
CONDITIONALS = ("if", "ifdef", "ifndef", "elif", "elifdef", "elifndef")
KEYWORDS = frozenset({"__restrict__", "__restrict", "__inline__", "__inline", "__LINE__", "__VA_ARGS__",
                      "__VA_OPT__"})  # reserved words both compilers read alike
_RESERVED = re.compile(r"\b(_[_A-Z]\w*)")
_IDENT = re.compile(r"[A-Za-z_]\w*")


class CuSourceError(SubmissionError):
    """A ``.cu`` file that would show the CPU executor's g++ and NVRTC different code."""


@functools.cache
def cuda_names() -> frozenset[str]:
    """The reserved identifiers of the CUDA model the CPU executor provides (its headers' declarations)."""
    names = set(KEYWORDS)
    for path in sorted(HEADERS.glob("*.h")):
        text = path.read_text()
        names.update(re.findall(r"^#define\s+(\w+)", text, flags=re.M))
        names.update(re.findall(r"\b(?:struct|typedef\s+\w+)\s+(\w+)", text))
        names.update(re.findall(r"^(?:template\s*<[^>]*>\s*)?inline\s+[\w\s:<>*&]*?\b(\w+)\s*\(", text, flags=re.M))
    names -= {"__CUDACC__", "__CUDA_ARCH__", "DRIPSTONE_DYNAMIC_SHARED"}  # the toolchain's, for its own headers
    return frozenset(n for n in names if _RESERVED.fullmatch(n))


def _blank(text: str) -> str:
    """``text`` with comments and string/character literals blanked (same lines, same columns)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1 : j - 1]) + (c if j - 1 > i else ""))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _logical_lines(code: str) -> list[tuple[int, str]]:
    """(first line number, text) of each logical line (backslash-newline joined)."""
    out, buf, start = [], [], 0
    for n, row in enumerate(code.split("\n"), 1):
        if not buf:
            start = n
        if row.endswith("\\"):
            buf.append(row[:-1])
            continue
        buf.append(row)
        out.append((start, " ".join(buf)))
        buf = []
    if buf:
        out.append((start, " ".join(buf)))
    return out


def _refuse(label: str, line: int, lines: list[str], why: str) -> CuSourceError:
    code = lines[line - 1].strip() if 0 < line <= len(lines) else ""
    return CuSourceError(_("{label} line {line} (`{code}`): {why}").format(label=label, line=line, code=code, why=why))


def check(text: str, label: str, *, cpu: bool = False) -> None:
    """Refuse (CuSourceError naming the line) a .cu text whose preprocessing or reserved names could differ between
    g++ (the CPU executor) and NVRTC; see the module's docstring. ``cpu``: also refuse inline assembly."""
    lines = text.splitlines()
    code = _blank(text)
    macros: dict[str, tuple[list[str], str]] = {}  # defined outside any group: name -> (parameters, body)
    depth = 0
    allowed = cuda_names()
    for n, row in _logical_lines(code):
        m = re.match(r"\s*#\s*(\w*)(.*)$", row)
        if m is None:
            _check_names(row, allowed, label, n, lines)
            if cpu and re.search(r"\b(asm|__asm__|__asm)\b", row):
                raise _refuse(label, n, lines, _(
                    "inline assembly does not run on the CPU executor (it runs C++ only): write the kernel in "
                    "CUDA C++"))
            continue
        directive, rest = m.group(1), m.group(2).strip()
        if directive in CONDITIONALS:
            _check_condition(directive, rest, macros, label, n, lines)
            depth += directive.startswith("if")
        elif directive == "endif":
            depth -= 1
        elif directive in ("else", "error", "warning", ""):
            pass
        elif directive == "define":
            d = re.match(r"(\w+)(\(([^)]*)\))?\s*(.*)$", rest)
            if d is None:
                raise _refuse(label, n, lines, _("a #define without a name"))
            name = d.group(1)
            if _RESERVED.fullmatch(name) and name not in PROJECT_MACROS:
                raise _refuse(label, n, lines, _(
                    "`{name}` is a reserved name (the compilers' own macros begin with __ or _ and a capital): "
                    "name your macro without a leading underscore").format(name=name))
            params = [p.strip() for p in d.group(3).split(",")] if d.group(2) else []
            _check_names(d.group(4), allowed, label, n, lines)
            if "##" in d.group(4):
                raise _refuse(label, n, lines, _(
                    "token pasting (##) builds names this check cannot read; write the names out"))
            if depth == 0 and name not in PROJECT_MACROS:
                macros[name] = (params, d.group(4))
            else:
                macros.pop(name, None)
        elif directive == "undef":
            macros.pop(rest.split()[0] if rest.split() else "", None)
        elif directive == "include":
            inc = re.fullmatch(r"<\s*([\w./]+)\s*>", rest)
            if inc is None or inc.group(1) not in INCLUDES:
                raise _refuse(label, n, lines, _(
                    "#include of {what}: a .cu exercise is one file, and includes only the CUDA and C headers both "
                    "compilers provide ({headers})").format(
                        what=rest or "nothing", headers=", ".join(f"<{h}>" for h in sorted(INCLUDES))))
        elif directive == "pragma":
            if not rest.split() or rest.split()[0] not in PRAGMAS:
                raise _refuse(label, n, lines, _(
                    "#pragma {what}: g++ and NVRTC read pragmas differently; a .cu exercise may use "
                    "#pragma unroll, #pragma nounroll and #pragma once").format(what=rest))
        else:
            raise _refuse(label, n, lines, _(
                "the directive #{directive} is not one both compilers read alike: use #define, #undef, #include, "
                "#if/#ifdef/#ifndef/#elif/#else/#endif, #pragma unroll, #error").format(directive=directive))


def _check_names(row: str, allowed: frozenset[str], label: str, n: int, lines: list[str]) -> None:
    for word in _RESERVED.findall(row):
        if word not in allowed:
            raise _refuse(label, n, lines, _(
                "`{name}` is not part of the CUDA model both compilers provide (the CPU executor's g++ and NVRTC "
                "define different reserved names): use the CUDA functions and types the course teaches").format(
                    name=word))


def _check_condition(directive: str, rest: str, macros: dict[str, tuple[list[str], str]], label: str, n: int,
                     lines: list[str]) -> None:
    if directive in ("ifdef", "ifndef", "elifdef", "elifndef"):
        names, tested = _IDENT.findall(rest), []
        if len(names) != 1:
            raise _refuse(label, n, lines, _("#{directive} takes one macro name").format(directive=directive))
        tested = [(names[0], True)]
    else:
        if re.search(r"[^\w\s()!~*/%+\-<>=&|^?:,.]", rest):
            raise _refuse(label, n, lines, _(
                "this condition holds something other than macros, numbers and operators"))
        tested = []
        words = _IDENT.findall(re.sub(r"\b\d[\w.]*", " ", rest))
        for i, w in enumerate(words):
            if w == "defined":
                continue
            tested.append((w, i > 0 and words[i - 1] == "defined"))
    for name, by_definedness in tested:
        if name in ("true", "false"):
            continue
        if name in PROJECT_MACROS and by_definedness:
            continue
        bad = _unlike(name, macros, set())
        if bad is not None or (name in PROJECT_MACROS and not by_definedness):
            raise _refuse(label, n, lines, _(
                "this condition tests `{name}`, which the two compilers of a .cu (the CPU executor's g++, NVRTC for "
                "the GPU and the PTX checks) may define differently, so they would compile different code: test only "
                "macros this file #defines above, outside any #if").format(name=bad or name))


def _unlike(name: str, macros: dict[str, tuple[list[str], str]], seen: set[str]) -> str | None:
    """The first name ``name`` depends on that is not one of the file's own unconditional macros (None if all are)."""
    if name in seen:
        return None
    if name not in macros:
        return name
    seen.add(name)
    params, body = macros[name]
    for w in _IDENT.findall(re.sub(r"\b\d[\w.]*", " ", body)):
        if w in params or w in ("defined", "true", "false"):
            continue
        bad = _unlike(w, macros, seen)
        if bad is not None:
            return bad
    return None


def for_nvrtc(text: str) -> str:
    """What NVRTC compiles: the file after the project's macros (the same as the CPU executor's), line for line."""
    return NVRTC_PRELUDE + text
