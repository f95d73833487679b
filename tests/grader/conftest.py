"""Engine tests: pytester for end-to-end runs of the plugin."""

import pytest

pytest_plugins = ["pytester"]

_course_cost: list[str] = []  # test_course.py's per-unit CPU table, handed over by a pytest-xdist worker


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error) -> None:
    _course_cost.extend(getattr(node, "workeroutput", {}).get("dripstone_course_cost", []))


def pytest_terminal_summary(terminalreporter) -> None:
    if _course_cost:
        terminalreporter.section(_course_cost[0])
        for line in _course_cost[1:]:
            terminalreporter.write_line(line)
