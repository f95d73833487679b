"""grader/learner/figures.py: a unit's measured figure (PNG without a plotting library) embedded in the report."""

from __future__ import annotations

import struct
import zlib

from grader.learner import figures


def test_line_chart_is_a_valid_png_with_the_series_colours(tmp_path):
    png = figures.line_chart_png([([(1, 1.0), (2, 0.8), (4, 0.7)], "blue", False),
                                  ([(1, 1.0), (8, 0.5)], "orange", True)], width=120, height=80)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", png[16:24])
    assert (width, height) == (120, 80)
    idat = png.index(b"IDAT")
    size = struct.unpack(">I", png[idat - 4:idat])[0]
    raw = zlib.decompress(png[idat + 4:idat + 4 + size])
    assert len(raw) == height * (1 + 3 * width)
    assert bytes(figures.PALETTE["blue"]) in raw and bytes(figures.PALETTE["orange"]) in raw


def test_saved_figures_are_embedded_with_their_caption(tmp_path):
    assert figures.figures_html(tmp_path) == ""
    png = figures.line_chart_png([([(0, 0.0), (1, 1.0)], "green", True)], width=40, height=30)
    path = figures.save_figure("c1_scaling_study", "efficiency", png, "P=2: 0.86 <measured>", root=tmp_path)
    assert path.read_bytes() == png
    shown = figures.figures_html(tmp_path)
    assert "data:image/png;base64," in shown and "c1_scaling_study" in shown and "&lt;measured&gt;" in shown
