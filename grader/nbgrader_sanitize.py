"""Old path of :mod:`grader.instructor.nbgrader_sanitize`, kept: nbgrader configs generated before the move name it."""

import sys

from grader.instructor import nbgrader_sanitize

sys.modules[__name__] = nbgrader_sanitize
