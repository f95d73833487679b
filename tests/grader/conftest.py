"""Engine tests: pytester for end-to-end runs of the plugin; the batch sandbox as this machine runs it."""

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


@pytest.fixture(scope="session")
def sandbox_runtime():
    """The batch sandbox's runtime here (probed once per test process), or the test skips and says why."""
    from grader.instructor import sandbox

    try:
        return sandbox.probe()
    except sandbox.SandboxUnavailable as exc:
        pytest.skip(f"no sandbox: {exc}")


@pytest.fixture(scope="session")
def bwrap_runtime(sandbox_runtime):
    """The sandbox with bubblewrap (namespaces, the full isolation), or the test skips and says why."""
    from grader.instructor import sandbox

    if sandbox_runtime.isolation is not sandbox.Isolation.BWRAP:
        pytest.skip(f"needs bubblewrap: {sandbox_runtime.describe()}")
    return sandbox_runtime
