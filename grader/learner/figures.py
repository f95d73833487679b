"""Figures a unit shows in the learner's report: measurements that are displayed, never scored.

A unit's measuring script (trusted code under ``tests/<unit>/``, run by the learner) draws a chart with
:func:`line_chart_png` and saves it with :func:`save_figure`; ``python -m grader report`` then embeds every
saved figure (``.dripstone/figures/<unit>/<name>.png`` and its caption ``<name>.txt``) in its page, inline
as base64, under "Measurements". Pure Python (zlib + struct): no plotting library is needed, so the PNG has
no text; the caption and the table beside it carry the numbers and the legend.
"""

from __future__ import annotations

import base64
import html
import struct
import zlib
from collections.abc import Sequence
from pathlib import Path

from grader.learner import history

FIGURES = history.STATE / "figures"
Color = tuple[int, int, int]
PALETTE: dict[str, Color] = {"blue": (9, 105, 218), "orange": (219, 109, 40), "green": (26, 127, 55),
                             "red": (207, 34, 46), "grey": (110, 119, 129)}


def _png(pixels: list[bytearray], width: int, height: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    raw = b"".join(b"\x00" + bytes(row) for row in pixels)
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


def line_chart_png(series: Sequence[tuple[Sequence[tuple[float, float]], str, bool]], *, width: int = 480,
                   height: int = 300, y_range: tuple[float, float] | None = None) -> bytes:
    """A PNG of one or more series on shared linear axes, each ``(points, color name, draw_line)``.

    Points are (x, y); ``draw_line=False`` draws markers only (measurements), True joins the points and
    marks them small (a model); series are drawn in order, so put measurements last. Light grid lines at 5
    divisions of each axis; ``y_range`` fixes the y axis.
    """
    pts = [p for s, _, _ in series for p in s]
    if not pts:
        raise ValueError("series must hold at least one point")
    x0, x1 = min(x for x, _ in pts), max(x for x, _ in pts)
    y0, y1 = y_range or (min(y for _, y in pts), max(y for _, y in pts))
    x1, y1 = (x1 if x1 > x0 else x0 + 1), (y1 if y1 > y0 else y0 + 1)
    pad = 24
    pixels = [bytearray(b"\xff" * 3 * width) for _ in range(height)]

    def put(px: int, py: int, c: Color) -> None:
        if 0 <= px < width and 0 <= py < height:
            pixels[py][3 * px:3 * px + 3] = bytes(c)

    def to_px(x: float, y: float) -> tuple[int, int]:
        return (round(pad + (x - x0) / (x1 - x0) * (width - 2 * pad)),
                round(height - pad - (y - y0) / (y1 - y0) * (height - 2 * pad)))

    for k in range(6):  # grid
        gx = round(pad + k * (width - 2 * pad) / 5)
        gy = round(pad + k * (height - 2 * pad) / 5)
        for t in range(pad, height - pad + 1):
            put(gx, t, (225, 228, 232))
        for t in range(pad, width - pad + 1):
            put(t, gy, (225, 228, 232))
    for t in range(pad, width - pad + 1):  # axes
        put(t, height - pad, (60, 60, 60))
    for t in range(pad, height - pad + 1):
        put(pad, t, (60, 60, 60))
    for points, color, line in series:
        c = PALETTE.get(color, PALETTE["grey"])
        pix = [to_px(x, y) for x, y in sorted(points)]
        if line:
            for (ax, ay), (bx, by) in zip(pix, pix[1:], strict=False):
                n = max(abs(bx - ax), abs(by - ay), 1)
                for i in range(n + 1):
                    px, py = round(ax + (bx - ax) * i / n), round(ay + (by - ay) * i / n)
                    for dx in (0, 1):
                        put(px + dx, py, c)
                        put(px, py + dx, c)
        r = 2 if line else 5  # a model's points small, measured points large (drawn over a model's line)
        for px, py in pix:
            for dx in range(-r, r + 1):
                for dy in range(-r, r + 1):
                    if dx * dx + dy * dy <= r * r:
                        put(px + dx, py + dy, c)
    return _png(pixels, width, height)


def save_figure(unit: str, name: str, png: bytes, caption: str, *, root: Path | None = None) -> Path:
    """Write ``<root>/<unit>/<name>.png`` and its caption (plain text) for the report; returns the PNG's path."""
    folder = (root or FIGURES) / unit
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.txt").write_text(caption)
    path = folder / f"{name}.png"
    path.write_bytes(png)
    return path


def figures_html(root: Path | None = None) -> str:
    """Every saved figure as an inline <figure> (unit, caption as preformatted text); "" when there is none."""
    out = []
    for png in sorted((root or FIGURES).glob("*/*.png")):
        caption = png.with_suffix(".txt").read_text() if png.with_suffix(".txt").exists() else ""
        data = base64.b64encode(png.read_bytes()).decode()
        out.append(f"<figure><figcaption><b>{html.escape(png.parent.name)} · {html.escape(png.stem)}</b>"
                   f"</figcaption><img alt='{html.escape(png.stem)}' src='data:image/png;base64,{data}'>"
                   f"<pre>{html.escape(caption)}</pre></figure>")
    return "".join(out)
