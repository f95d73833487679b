"""``python -m grader report``: one self-contained HTML page of the latest grading run.

The scoreboard; for each kernel exercise whose efficiency tests counted traffic, a roofline plot (its
arithmetic intensity, FLOPs over the bytes the grader counted, against the ridge of a GPU of
``grader.constants.GPUS``, with the unit's ledger minimum beside it: every tensor read or written
once) and bars of the bytes loaded and stored against that ledger; then the course progress. Inline
SVG and CSS only: no script, nothing fetched from the network, so it opens anywhere, offline.
"""

from __future__ import annotations

import argparse
import html
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from grader import api, i18n
from grader.constants import GPUS
from grader.core.results import GradeReport, Status, Tier, totals
from grader.i18n import N_, _
from grader.learner import figures, history, progress
from grader.learner.scoreboard import label, next_exercise

DEFAULT_GPU = "H100-SXM"
COLORS = {Status.PASSED: "#1a7f37", Status.FAILED: "#cf222e", Status.TODO: "#9a6700",
          Status.PENDING_GPU: "#0969da", Status.ERROR: "#8250df"}


@dataclass(frozen=True)
class Tensor:
    name: str
    shape: tuple[int, ...]
    dtype: str
    nbytes: int


def _tensors(block: dict) -> list[Tensor]:
    out = []
    for t in block.get("tensors", []):
        dims, _, dtype = str(t["desc"]).rpartition(" ")
        shape = tuple(int(x) for x in dims.split("×") if x.isdigit())
        out.append(Tensor(str(t["name"]), shape, dtype, int(t["bytes"])))
    return out


def _numel(t: Tensor) -> int:
    return math.prod(t.shape) if t.shape else 1


def _matmul_flops(ts: list[Tensor]) -> int:
    (m, k), n = ts[0].shape[-2:], ts[1].shape[-1]
    return 2 * m * k * n


def _attention_flops(ts: list[Tensor]) -> int:
    *bh, n, d = ts[0].shape
    return 4 * math.prod(bh) * n * n * d  # QKᵀ and PV, non-causal


# FLOPs of one call from its tensor arguments, as the unit's README counts them.
FLOPS: dict[str, Callable[[list[Tensor]], int]] = {
    "transpose": lambda ts: 0,  # a copy: no arithmetic, bandwidth is its only roof
    "softmax_fused": lambda ts: 5 * _numel(ts[0]),  # max, subtract, exp, sum, divide per element
    "softmax_online": lambda ts: 5 * _numel(ts[0]),
    "matmul": _matmul_flops,
    "flash_attention_fwd": _attention_flops,
}


@dataclass(frozen=True)
class KernelPoint:
    """One counted call of a kernel exercise, as the roofline and the bars show it."""

    unit: str
    exercise: str
    test: str
    flops: int
    loaded: int
    stored: int
    ledger: int  # every tensor argument read or written once
    dtype: str

    @property
    def intensity(self) -> float:
        return self.flops / max(self.loaded + self.stored, 1)

    @property
    def ledger_intensity(self) -> float:
        return self.flops / max(self.ledger, 1)


def kernel_points(report: GradeReport) -> list[KernelPoint]:
    """The last counted call of each efficiency test that recorded traffic (see grader.instrument.traffic)."""
    points = []
    for r in report.results:
        blocks = r.record.get("traffic") if r.tier is Tier.EFFICIENCY else None
        if not blocks:
            continue
        block = blocks[-1]
        ts = _tensors(block)
        flops = FLOPS[r.exercise](ts) if r.exercise in FLOPS and ts else 0
        points.append(KernelPoint(r.unit, r.exercise, r.name, flops, int(block["bytes_loaded"]),
                                  int(block["bytes_stored"]), sum(t.nbytes for t in ts),
                                  ts[0].dtype if ts else "float32"))
    return points


def peak_flops(gpu: str, dtype: str) -> float:
    """The roof of ``gpu`` for ``dtype``: Tensor Core bf16/fp16, else fp32."""
    g = GPUS[gpu]
    return g.bf16_flops if dtype in ("float16", "bfloat16") else g.fp32_flops


# ---- SVG ----------------------------------------------------------------------------------------------------------

W, H, PAD = 460, 300, 48
AI_RANGE = (1e-2, 1e4)


def _x(ai: float) -> float:
    lo, hi = (math.log10(v) for v in AI_RANGE)
    return PAD + (math.log10(min(max(ai, AI_RANGE[0]), AI_RANGE[1])) - lo) / (hi - lo) * (W - 2 * PAD)


def _y(flops: float, top: float) -> float:
    lo, hi = math.log10(top) - 6, math.log10(top) + 0.3
    v = min(max(flops, 10**lo), 10**hi)
    return H - PAD - (math.log10(v) - lo) / (hi - lo) * (H - 2 * PAD)


def roofline_svg(p: KernelPoint, gpu: str) -> str:
    """A log-log roofline of ``gpu`` with the learner's point and the ledger's."""
    g, peak = GPUS[gpu], peak_flops(gpu, p.dtype)
    ridge = peak / g.hbm_bytes_per_s
    lo, hi = AI_RANGE
    roof = [(lo, g.hbm_bytes_per_s * lo), (ridge, peak), (hi, peak)]
    path = " ".join(f"{'M' if i == 0 else 'L'}{_x(a):.1f},{_y(f, peak):.1f}" for i, (a, f) in enumerate(roof))
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="roofline" width="{W}" height="{H}" '
             f'viewBox="0 0 {W} {H}" role="img" aria-label="roofline of {html.escape(p.exercise)}">',
             f'<rect x="{PAD}" y="{PAD}" width="{W - 2 * PAD}" height="{H - 2 * PAD}" fill="#f6f8fa"/>',
             f'<path d="{path}" fill="none" stroke="#57606a" stroke-width="2"/>',
             f'<line x1="{_x(ridge):.1f}" y1="{PAD}" x2="{_x(ridge):.1f}" y2="{H - PAD}" stroke="#8c959f" '
             'stroke-dasharray="4 3"/>',
             f'<text x="{_x(ridge) + 4:.1f}" y="{PAD + 12}" font-size="11">'
             + html.escape(_("ridge {value} FLOP/B").format(value=f"{ridge:.0f}")) + '</text>']
    for dec in range(-2, 5):
        parts.append(f'<text x="{_x(10**dec):.1f}" y="{H - PAD + 14}" font-size="10" text-anchor="middle">'
                     f'{10**dec:g}</text>')
    parts.append(f'<text x="{W / 2}" y="{H - 8}" font-size="11" text-anchor="middle">'
                 + html.escape(_("arithmetic intensity (FLOP/B, log)")) + '</text>')
    parts.append(f'<text x="12" y="{H / 2}" font-size="11" transform="rotate(-90 12 {H / 2})" '
                 'text-anchor="middle">' + html.escape(_("attainable FLOP/s (log)")) + '</text>')
    for ai, name, color in ((p.ledger_intensity, N_("ledger minimum"), "#0969da"),
                            (p.intensity, N_("yours"), "#cf222e")):
        attained = min(peak, g.hbm_bytes_per_s * ai)
        cx, cy = _x(ai), _y(max(attained, 1.0), peak)
        parts.append(f'<circle class="point" cx="{cx:.1f}" cy="{cy:.1f}" r="5" fill="{color}"/>')
        dy = -8 if name == "yours" else 16
        parts.append(f'<text x="{cx + 7:.1f}" y="{cy + dy:.1f}" font-size="11" fill="{color}">'
                     f'{html.escape(_(name))}: {ai:.3g} FLOP/B</text>')
    parts.append("</svg>")
    return "".join(parts)


def bars_svg(p: KernelPoint) -> str:
    """Bytes loaded, stored, and their sum, against the ledger's minimum."""
    rows = [(N_("loaded"), p.loaded, "#cf222e"), (N_("stored"), p.stored, "#bf8700"),
            (N_("total"), p.loaded + p.stored, "#57606a"), (N_("ledger minimum"), p.ledger, "#0969da")]
    top = max(row[1] for row in rows) or 1
    bw, h = 300, 24 * len(rows) + 10
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="bars" width="{bw + 230}" height="{h}" '
             f'viewBox="0 0 {bw + 230} {h}" role="img" aria-label="bytes of {html.escape(p.exercise)}">']
    for i, (name, value, color) in enumerate(rows):
        y = 6 + 24 * i
        parts.append(f'<text x="0" y="{y + 13}" font-size="11">{html.escape(_(name))}</text>')
        parts.append(f'<rect x="100" y="{y}" width="{max(value / top * bw, 1):.1f}" height="16" fill="{color}"/>')
        parts.append(f'<text x="{104 + value / top * bw:.1f}" y="{y + 13}" font-size="11">{value:,} B</text>')
    parts.append("</svg>")
    return "".join(parts)


# ---- the page -----------------------------------------------------------------------------------------------------

# CJK fallbacks after the Latin faces: a Chinese page (DRIPSTONE_LANG=zh) renders with the system's CJK font.
FONTS = ("system-ui,-apple-system,'Segoe UI',Roboto,'Noto Sans CJK SC','Noto Sans SC','Source Han Sans SC',"
         "'PingFang SC','Hiragino Sans GB','Microsoft YaHei','WenQuanYi Micro Hei',sans-serif")
CSS = "body{font-family:" + FONTS + """;margin:2em;color:#1f2328;max-width:1100px}
.bar{display:inline-block;height:10px;background:#1a7f37;vertical-align:middle}
.barbox{display:inline-block;width:160px;height:10px;background:#eaeef2;vertical-align:middle;margin-right:.5em}
details{margin:.3em 0}summary{cursor:pointer;font-weight:600}.next{font-size:110%;padding:.6em;background:#fff8c5}
table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{padding:3px 10px;border-bottom:1px solid #d0d7de;
text-align:left;vertical-align:top}th{background:#f6f8fa}.hint{color:#57606a;font-size:90%}
.kernel{display:flex;gap:2em;flex-wrap:wrap;align-items:center;margin-bottom:1.5em}
pre{white-space:pre-wrap;font-size:85%;margin:0}"""


def _e(text: object) -> str:
    return html.escape(str(text))


def _scoreboard(report: GradeReport) -> str:
    out = []
    for unit, results in report.by_unit().items():
        score, max_score = totals(results)
        failing = sum(r.status is Status.FAILED for r in results)
        out.append(f"<details{' open' if failing else ''}><summary>{_e(unit)} · {score:g}/{max_score:g}"
                   + (" · " + _e(_("{n} failing").format(n=failing)) if failing else "") + "</summary>"
                   "<table class='scoreboard'><tr>" + "".join(f"<th>{_e(_(h))}</th>" for h in (
                       N_("exercise"), N_("tier"), N_("test"), N_("points"), N_("status"),
                       N_("first failure · hint"))) + "</tr>")
        for r in results:
            word, _style = label(r.status)
            why = "" if r.status in (Status.PASSED, Status.PENDING_GPU) else (
                f"{_e(r.message)}" + (f"<div class='hint'>→ {_e(_(r.hint, unit=r.unit))}</div>" if r.hint else ""))
            out.append(f"<tr><td>{_e(r.exercise)}</td><td>{_e(r.tier)}</td><td>{_e(r.name)}</td>"
                       f"<td>{r.score:g}/{r.points:g}</td><td style='color:{COLORS[r.status]}'>{_e(word)}</td>"
                       f"<td>{why}</td></tr>")
        out.append("</table></details>")
    return "".join(out)


def _kernels(points: list[KernelPoint], gpu: str) -> str:
    if not points:
        return "<p>" + _e(_("No kernel exercise counted traffic in this run (grade a kernel unit: L=22 to L=25).")) \
            + "</p>"
    out = []
    for p in points:
        out.append(f"<h3>{_e(p.unit)} · {_e(p.exercise)} <small>({_e(p.test)}, {_e(p.dtype)})</small></h3>"
                   f"<div class='kernel'>{roofline_svg(p, gpu)}{bars_svg(p)}</div>")
    return "".join(out)


ACCESS_KINDS = (N_("read"), N_("write"))  # a bank-conflict line's kind of access, as the CPU executor records it


def _bank_conflicts(report: GradeReport) -> str:
    """Each .cu kernel's shared-memory bank conflicts per line, as its efficiency test recorded them."""
    out = []
    for r in report.results:
        data = r.record.get("bank_conflicts")
        if not isinstance(data, dict):
            continue
        rows = "".join(
            f"<tr><td>{_e(c.get('line'))}</td><td><code>{_e(c.get('text', ''))}</code></td>"
            f"<td>{_e(_(str(c.get('kind'))))}</td><td>{_e(', '.join(c.get('arrays', [])))}</td>"
            f"<td style='color:{'#cf222e' if int(c.get('degree', 0)) > 1 else '#1a7f37'}'>"
            f"{_e(c.get('degree'))}</td><td>{_e(c.get('count'))}/{_e(c.get('requests'))}</td></tr>"
            for c in data.get("lines", []))
        out.append(f"<h3>{_e(r.unit)} · {_e(r.exercise)} <small>({_e(data.get('kernel'))})</small></h3>"
                   "<table class='banks'><tr>" + "".join(f"<th>{_e(_(h))}</th>" for h in (
                       N_("line"), N_("code"), N_("access"), N_("arrays"), N_("worst degree"),
                       N_("conflicted requests"))) + f"</tr>{rows}</table>")
    if not out:
        return ""
    return (f"<h2>{_e(_('Shared-memory bank conflicts'))}</h2><p>"
            + _e(_("Per kernel line, the worst n-way conflict of a warp's request (1: conflict-free) and how many "
                   "requests conflicted, counted on the CPU executor."))
            + "</p>" + "".join(out))


def _progress(report: GradeReport) -> str:
    rows = progress.course_progress(report, api.all_units())
    graded = [r for r in rows if r.graded]
    score, max_score = sum(r.score for r in graded), sum(r.max_score for r in graded)
    out = ["<p>" + _e(_("{done} of {units} units done; {points} points in the units graded").format(
        done=sum(r.status == "done" for r in rows), units=len(rows), points=f"{score:g}/{max_score:g}")) + "</p>",
           "<table class='progress'><tr>" + "".join(f"<th>{_e(_(h))}</th>" for h in (
               "#", N_("unit"), N_("points"), N_("exercises done"), N_("status"), N_("lecture"))) + "</tr>"]
    for n, r in enumerate(rows, 1):
        link = f"<a href='{_e(r.lecture)}'>{_e(progress.lecture_title(r.lecture))}</a>" if r.lecture else ""
        share = r.score / r.max_score if r.graded and r.max_score else 0.0
        bar = f"<span class='barbox'><span class='bar' style='width:{share * 100:.0f}%'></span></span>"
        points = f"{r.score:g}/{r.max_score:g}" if r.graded else "–"
        done = f"{r.exercises_done}/{r.exercises}" if r.graded else "–"
        out.append(f"<tr><td>{n}</td><td>{_e(r.unit)}</td><td>{bar}{points}</td><td>{done}</td>"
                   f"<td>{_e(_(r.status))}</td><td>{link}</td></tr>")
    out.append("</table>")
    return "".join(out)


def page(run: GradeReport, everything: GradeReport, *, gpu: str = DEFAULT_GPU, when: str = "") -> str:
    """The HTML of one grading run (``run``), with the course progress of every saved result."""
    if gpu not in GPUS:
        raise api.GraderError(f"no GPU {gpu!r}; grader.constants.GPUS has {', '.join(GPUS)}")
    nxt = next_exercise(run.results)
    nxt_html = (f"<p class='next'><b>{_e(_('next:'))}</b> {_e(nxt.unit)} · {_e(nxt.exercise)} "
                f"({_e(label(nxt.status)[0])}): {_e(nxt.message)}</p>" if nxt
                else f"<p class='next'>{_e(_('every graded test of this run passes'))}</p>")
    run_line = _("this run ({when}): {target}, {points} points in the units it graded · rooflines of {gpu} "
                 "({bandwidth} TB/s)").format(when=when, target=run.target, points=f"{run.score:g}/{run.max_score:g}",
                                              gpu=gpu, bandwidth=f"{GPUS[gpu].hbm_bytes_per_s / 1e12:.2f}")
    lang = "zh-CN" if i18n.language() == "zh" else "en"
    return (f"<!DOCTYPE html><html lang='{lang}'><head><meta charset='utf-8'><title>"
            f"{_e(_('Dripstone report'))}</title><style>{CSS}</style></head><body><h1>Dripstone · {_e(run.target)}"
            f"</h1>{nxt_html}<h2>{_e(_('Course progress'))}</h2>{_progress(everything)}"
            f"<h2>{_e(_('Kernels: roofline and bytes'))}</h2>{_kernels(kernel_points(run), gpu)}{_bank_conflicts(run)}"
            f"{_measurements()}"
            f"<h2>{_e(_('Scoreboard'))}</h2><p>{_e(run_line)}</p>{_scoreboard(run)}</body></html>")


def _measurements() -> str:
    """The figures units saved (grader/learner/figures.py): measurements shown, never scored."""
    shown = figures.figures_html()
    return f"<h2>{_e(_('Measurements (shown, never scored)'))}</h2>{shown}" if shown else ""


def write(out: Path | None = None, *, target: str = "exercises", gpu: str = DEFAULT_GPU) -> Path:
    """Write the page of ``target``'s latest grading run (``.dripstone/report-<time>.html`` by default)."""
    run = history.last_run(target)
    if not run.results:
        raise api.GraderError(f"no grading run of {target} saved yet: run `make grade` first")
    everything, when = history.load(target)
    out = out or history.STATE / f"report-{time.strftime('%Y%m%d-%H%M%S')}.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(page(run, everything, gpu=gpu, when=when))
    return out


def _report(args: argparse.Namespace) -> int:
    try:
        path = write(Path(args.out) if args.out else None, target=args.target, gpu=args.gpu)
    except api.GraderError as exc:
        print(f"report: {exc}")
        return 2
    print(f"wrote {path}: open it in a browser (no network needed)")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    r = sub.add_parser("report", help="an HTML page of the latest grading run: scoreboard, rooflines, bytes, progress")
    r.add_argument("--out", help="the .html file (default .dripstone/report-<time>.html)")
    r.add_argument("--gpu", default=DEFAULT_GPU, choices=sorted(GPUS),
                   help=f"the roofline's GPU (default {DEFAULT_GPU})")
    r.add_argument("--target", default="exercises", help="the graded folder, as make grade names it")
    r.set_defaults(func=_report)
