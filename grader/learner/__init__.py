"""What a learner runs besides ``make grade``: progress, hints, replay, watch mode and the HTML report.

Each module registers its own ``python -m grader`` subcommand (``register(sub)``); the CLI calls
:func:`learner_commands` once.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

Register = Callable[["argparse._SubParsersAction[argparse.ArgumentParser]"], None]


def learner_commands() -> list[Register]:
    """The ``register`` function of each learner command, in ``--help`` order."""
    from grader.learner import hints, progress, replay, report, watch

    return [progress.register, hints.register, replay.register, watch.register, report.register]
