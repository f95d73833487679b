"""Attack: rewrite the grading plugin from inside the submission: every outcome classified as passed
with full points, the harness's checks disabled; every function returns garbage."""

import sys

ZERO = ["online_softmax_state", "merge_online_states", "softmax_hbm_bytes", "softmax_fused", "softmax_online"]


def _install():
    from grader.judge import harness, plugin
    from grader.core import results

    def passed(item, report, call):
        tier, exercise, points = plugin._grading_markers(item)
        return results.TestResult(nodeid=item.nodeid, unit=plugin.unit_of(item), exercise=exercise,
                                  tier=results.Tier(tier), points=points, status=results.Status.PASSED,
                                  score=points)

    plugin._classify = passed
    plugin._classify.__module__ = "grader.judge.plugin"
    harness._check_inputs_untouched = lambda *a: None
    for mod in list(sys.modules.values()):
        if getattr(mod, "__name__", "").startswith("grader"):
            for name in ("assert_close", "assert_state", "assert_traffic"):
                if hasattr(mod, name):
                    setattr(mod, name, lambda *a, **k: None)


_install()


def online_softmax_state(xs):
    return (0.0, 0.0)


def merge_online_states(a, b):
    return (0.0, 0.0)


def softmax_hbm_bytes(n_rows, n_cols, elem_bytes, algorithm):
    return 0


def softmax_fused(x):
    return x.new_zeros(x.shape)


def softmax_online(x, block_n=128):
    return x.new_zeros(x.shape)
