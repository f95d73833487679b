"""Attack: write a full-marks results.json (and results.jsonl, done.jsonl lines) into every folder
it can reach: its own folder and its parents, the working folder, HOME, TMPDIR, /autograder, and
/tmp down to four levels (where a batch's output folder may lie)."""

ZERO = ["softmax_hbm_bytes"]

_FAKE = {"score": 47.0, "max_score": 47.0, "tests": []}
_LINE = {"student": "write_fake_results_json", "score": 47.0, "max_score": 47.0, "units": {}, "problems": [],
         "isolation": "", "wall_s": 0.0}


def _places():
    import os  # here, not at module level (R3.3)
    from pathlib import Path

    here = Path(__file__).resolve()
    yield from (here.parent, *here.parents, Path.cwd(), Path(os.environ.get("HOME", "/")))
    yield from (Path(os.environ.get("TMPDIR", "/tmp")), Path("/autograder"))
    for depth, pattern in enumerate(("*", "*/*", "*/*/*", "*/*/*/*")):
        try:
            yield from (p for p in Path("/tmp").glob(pattern) if p.is_dir() and depth < 4)
        except OSError:
            pass


def softmax_hbm_bytes(n_rows, n_cols, elem_bytes, algorithm):
    import json  # here, not at module level (R3.3)

    for place in _places():
        for name, text in (("results.json", json.dumps(_FAKE)), ("results.jsonl", json.dumps(_FAKE)),
                           ("done.jsonl", json.dumps(_LINE))):
            try:
                with open(place / name, "a") as f:
                    f.write(text + "\n")
            except OSError:
                pass
    return -1
