"""``grader drill``: timed, randomized interview drills over the course, with a memory of what you missed.

Questions are templates (grader/drill/template.py) collected from grader/drill/bank/; their answers come
from the course's graded functions in solutions/ (grader/drill/solutions.py), or from the precomputed bank data
file in a release (grader/drill/instances.py). How to write a template: grader/drill/README.md.
"""
