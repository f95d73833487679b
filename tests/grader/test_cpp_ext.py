"""grader.instrument.cpp_ext: a learner's pybind11 extension compiled once per source, called in a child process.

One extension (``demo.cpp``, three functions) is compiled once for the module (~4 s): the cache, a crash, a hang
and a normal call all use it. The compile-error test compiles a file without pybind11 (fast).
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from grader.core.target import SubmissionError
from grader.instrument import cpp_ext

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")

DEMO = """\
#include <pybind11/pybind11.h>
#include <cstdint>
namespace py = pybind11;
#define DRIPSTONE_TODO(msg) do { PyErr_SetString(PyExc_NotImplementedError, (msg)); throw py::error_already_set(); } \\
    while (0)

int add(int a, int b) { return a + b; }
int crash(int i) { volatile int *p = reinterpret_cast<int *>(std::uintptr_t(i)); return *p; }
int hang(int) { volatile bool spin = true; while (spin) {} return 0; }
int refuse(int v) { if (v < 0) throw py::value_error("v must be >= 0"); return v; }
int todo(int) {
    DRIPSTONE_TODO("TODO: write todo");
}

PYBIND11_MODULE(demo, m) {
    m.def("add", &add);
    m.def("crash", &crash);
    m.def("hang", &hang);
    m.def("refuse", &refuse);
    m.def("todo", &todo);
}
"""


@pytest.fixture(scope="module")
def target(tmp_path_factory):
    root = tmp_path_factory.mktemp("target")
    (root / "u").mkdir()
    (root / "u" / "demo.cpp").write_text(DEMO)
    cache = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DRIPSTONE_TARGET", str(root))
        mp.setenv(cpp_ext.CACHE_ENV, str(cache))
        yield root


def call(f, *args):
    return f(*args)


def test_build_is_cached_by_source(target, monkeypatch):
    first = cpp_ext.build(DEMO, "u/demo.cpp", "demo")
    assert first.is_file()

    def no_compiler(*args, **kwargs):
        raise AssertionError(f"compiled again: {args}")

    monkeypatch.setattr(subprocess, "run", no_compiler)
    assert cpp_ext.build(DEMO, "another/folder/demo.cpp", "demo") == first  # the same text, another target: a hit


def test_a_call_comes_back_as_data(target):
    assert cpp_ext.cpp_function("u", "demo", "add").run(call, 2, 3) == 5


def test_an_exception_keeps_its_type_and_message(target):
    with pytest.raises(ValueError, match=r"\bv must be >= 0"):
        cpp_ext.cpp_function("u", "demo", "refuse").run(call, -1)


def test_a_crash_fails_that_call_only(target):
    with pytest.raises(cpp_ext.NativeCrash, match="SIGSEGV"):
        cpp_ext.cpp_function("u", "demo", "crash").run(call, 0)
    assert cpp_ext.cpp_function("u", "demo", "add").run(call, 1, 1) == 2  # the grader's process lives on


def test_a_hang_is_stopped_at_the_wall_clock_limit(target):
    with pytest.raises(cpp_ext.NativeTimeout, match="did not return within 1 s"):
        cpp_ext.cpp_function("u", "demo", "hang").run(call, 0, timeout_s=1.0)
    assert cpp_ext.cpp_function("u", "demo", "add").run(call, 2, 2) == 4


def test_a_todo_is_not_implemented(target):
    with pytest.raises(NotImplementedError, match="TODO: write todo"):
        cpp_ext.cpp_function("u", "demo", "todo").run(call, 0)


def test_a_missing_function_is_a_submission_error(target):
    with pytest.raises(SubmissionError, match="defines no `absent`"):
        cpp_ext.cpp_function("u", "demo", "absent").run(call, 0)


def test_a_compile_error_names_the_line(tmp_path, monkeypatch):
    monkeypatch.setenv(cpp_ext.CACHE_ENV, str(tmp_path / "cache"))
    text = "int ok() { return 1; }\n\nint broken() {\n    return undeclared_name;\n}\n"
    with pytest.raises(cpp_ext.CppCompileError) as err:
        cpp_ext.build(text, "exercises/u/bad.cpp", "bad")
    first = str(err.value).splitlines()[0]
    assert first.startswith("exercises/u/bad.cpp line 4: compile error (g++): ")
    assert "undeclared_name" in first and "`return undeclared_name;`" in first
    assert not any((tmp_path / "cache").glob("*/bad*.so")), "a failed build must not be cached"
