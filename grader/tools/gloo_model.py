"""``python -m grader.tools.gloo_model [--write] [--json]``: measure gloo's bytes on the wire with this torch.

Runs the judge's measurement (grader/judge/gloo_model.py: honest, judge-written sends, receives, collectives,
barriers and rendezvous on 2-4 ranks, in a network namespace of its own, under the capture the wire check uses),
and prints the model it gives next to the one in use for this torch's release (the stored one, or none). ``--write``
stores it in grader/judge/gloo_models.json under this release (do it once per new torch release, with the
sandbox's Python for batch grading: ``/opt/dripstone/venv/bin/python -m grader.tools.gloo_model --write``).
Exit status: 0 measured (and stored with ``--write``); 1 the measurement failed; 2 the models file is unreadable
and ``--write`` was not given (it is replaced by one holding this model where it is).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence

from grader.judge import gloo_model as gm

_ROWS = (("msg_min", "message header, least (B)"), ("msg_max", "message header, most (B)"),
         ("start_base", "a start: base (B)"), ("start_per_pair", "a start: per pair of ranks (B)"),
         ("barrier_per_rank", "the grader's barrier per rank (B)"),
         ("collective_per_pair", "a collective's headers per pair (B)"))


def table(measured: gm.GlooModel, in_use: gm.GlooModel | None) -> list[str]:
    """The measured model beside the one in use, one number a line (shares per collective and world size)."""
    head = f"{'':40} {'measured':>10} {'in use':>10}"
    lines = [head]
    for key, label in _ROWS:
        now = getattr(in_use, key) if in_use is not None else "-"
        lines.append(f"{label:40} {getattr(measured, key):>10} {now:>10}")
    for name in sorted(measured.shares):
        for world, share in sorted(measured.shares[name].items()):
            now = f"{in_use.share(name, world):.5f}" if in_use is not None else "-"
            lines.append(f"{f'{name} share on {world} ranks':40} {share:>10.5f} {now:>10}")
    listed = ", ".join(sorted(measured.list_headers)) or "none"
    was = ", ".join(sorted(in_use.list_headers)) or "none" if in_use is not None else "-"
    lines.append(f"{'P sets of headers per call':40} {listed:>10} {was:>10}")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m grader.tools.gloo_model", description=__doc__.split("\n")[0])
    parser.add_argument("--write", action="store_true", help="store the measured model for this torch release")
    parser.add_argument("--json", action="store_true", help="print the raw measurement and the model as JSON")
    args = parser.parse_args(argv)
    release = gm.torch_release()
    try:
        stored = gm.load_stored()
        problem = ""
    except gm.ModelFileError as exc:
        stored, problem = {}, str(exc)
        print(problem, file=sys.stderr)
    t = time.monotonic()
    try:
        raw = gm.measure()
    except gm.MeasureError as exc:
        print(f"gloo's bytes could not be measured here: {exc}", file=sys.stderr)
        return 1
    seconds = time.monotonic() - t
    model = gm.derive(raw, release=release)
    in_use = stored.get(release)
    if args.json:
        print(json.dumps({"release": release, "raw": raw, "model": model.to_json()}, indent=1))
    else:
        print(f"torch {release}: gloo's bytes measured in {seconds:.1f} s; in use: "
              + ("the stored model" if in_use is not None else "none stored (the judge measures one in place)"))
        print("\n".join(table(model, in_use)))
        if in_use is not None:
            outside = gm.covers(in_use, gm.read(raw))
            print("the stored model covers this measurement" if not outside else
                  "OUTSIDE the stored model: " + "; ".join(outside))
    if args.write:
        gm.store(model)
        print(f"stored the model of torch {release} in {gm.MODELS_FILE}")
        return 0
    return 2 if problem else 0


if __name__ == "__main__":
    raise SystemExit(main())
