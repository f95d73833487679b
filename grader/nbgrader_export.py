"""Old path of :mod:`grader.instructor.nbgrader_export`, kept: nbgrader configs generated before the move name it."""

import sys

from grader.instructor import nbgrader_export

sys.modules[__name__] = nbgrader_export
