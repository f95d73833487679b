"""Old path of :mod:`grader.instructor.nbgrader_course`, kept: nbgrader configs generated before the move name it."""

import sys

from grader.instructor import nbgrader_course

sys.modules[__name__] = nbgrader_course
