"""Layer 0, the core: what every other layer may use and that uses none of them.

Targets and loading learner files (``target``), the results and their report (``results``), failure classes
(``failures``), time limits (``timeout``), the grading command line (``command``), the solution-to-stub transform
(``stubs``). With ``grader.i18n``, ``grader.constants``, ``grader.validate`` and ``grader._lazy`` at the top of the
package. The layering is stated and checked in ``grader/LAYERS.md`` (tests/grader/test_layers.py).
"""
