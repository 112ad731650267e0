"""Inline SVG figures of the release report, drawn from counts and summary measures only:
grouped bar charts (histograms, class sizes) and the labelled scatter of the R-U map. Plain
SVG text with no script, font or external reference, so the page stays self-contained."""

from __future__ import annotations

import math
from typing import Sequence

from ._html import esc

WIDTH, HEIGHT = 440, 240
LEFT, RIGHT, TOP, BOTTOM = 56, 24, 30, 46
PALETTE = ("#3b6fb6", "#e07b39", "#3a9a5b", "#b5446e", "#7a5cb8", "#8c6d3f", "#4aa3b5", "#666666")
"""Series colours (the first two: original and released), distinct in grey print too."""


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """About ``count`` round tick values (1, 2, 2.5, 5 × 10^e apart) covering [lo, hi]."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / max(count - 1, 1)
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1.0, 2.0, 2.5, 5.0, 10.0) if m * power >= raw * (1 - 1e-12))
    first, last = math.floor(lo / step + 1e-9), math.ceil(hi / step - 1e-9)
    return [i * step for i in range(first, last + 1)]


def label(value: float) -> str:
    """A tick label: a whole number with thousands separators, else four significant digits."""
    if value == int(value) and abs(value) < 1e15:
        return f"{int(value):,}"
    return f"{value:.4g}"


def _frame(title: str, x_label: str, y_label: str, body: list[str]) -> str:
    h = HEIGHT - BOTTOM
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{esc(title)}" font-family="sans-serif" font-size="11">',
        f"<title>{esc(title)}</title>",
        f'<text x="{WIDTH / 2}" y="16" text-anchor="middle" font-size="12" font-weight="bold">{esc(title)}</text>',
        f'<line x1="{LEFT}" y1="{h}" x2="{WIDTH - RIGHT}" y2="{h}" stroke="#333"/>',
        f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{h}" stroke="#333"/>',
        f'<text x="{(LEFT + WIDTH - RIGHT) / 2}" y="{HEIGHT - 6}" text-anchor="middle">{esc(x_label)}</text>',
        f'<text transform="translate(12 {(TOP + h) / 2}) rotate(-90)" text-anchor="middle">{esc(y_label)}</text>',
        *body,
        "</svg>",
    ]
    return "".join(parts)


def _y_axis(ticks: list[float], y_of: "Scale") -> list[str]:
    out = []
    for t in ticks:
        y = y_of(t)
        out.append(f'<line x1="{LEFT - 4}" y1="{y:.1f}" x2="{WIDTH - RIGHT}" y2="{y:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{esc(label(t))}</text>')
    return out


class Scale:
    """Linear map of data values [lo, hi] onto pixels [a, b]."""

    def __init__(self, lo: float, hi: float, a: float, b: float) -> None:
        self.lo, self.hi, self.a, self.b = lo, hi if hi > lo else lo + 1.0, a, b

    def __call__(self, v: float) -> float:
        return self.a + (v - self.lo) / (self.hi - self.lo) * (self.b - self.a)


def bar_chart(
    n_bars: int,
    series: Sequence[tuple[str, Sequence[int]]],
    ticks: Sequence[tuple[float, str]],
    *,
    title: str,
    x_label: str,
    y_label: str = "records",
) -> str:
    """Grouped bars: for each of ``n_bars`` slots one bar per series (name, counts), a legend,
    and x ticks at slot positions (0 the left of the first slot, ``n_bars`` the right of the
    last) with their labels."""
    h = HEIGHT - BOTTOM
    top = max([max(c, default=0) for _, c in series] + [1])
    yt = nice_ticks(0.0, float(top))
    y = Scale(0.0, yt[-1], h, TOP)
    x = Scale(0.0, float(n_bars), LEFT + 2, min(WIDTH - RIGHT - 2, LEFT + 2 + 60 * n_bars))
    slot = (x(1.0) - x(0.0)) / max(len(series), 1)
    body = _y_axis(yt, y)
    for s, (name, counts) in enumerate(series):
        colour = PALETTE[s % len(PALETTE)]
        for i, c in enumerate(counts):
            if c:
                x0 = x(float(i)) + s * slot
                body.append(
                    f'<rect x="{x0 + 0.5:.1f}" y="{y(c):.1f}" width="{max(slot - 1, 0.8):.1f}" '
                    f'height="{h - y(c):.1f}" fill="{colour}"><title>{esc(name)}: {c}</title></rect>'
                )
        lx = WIDTH - RIGHT - 110 * (len(series) - s)
        body.append(f'<rect x="{lx}" y="{TOP - 6}" width="10" height="10" fill="{colour}"/>')
        body.append(f'<text x="{lx + 14}" y="{TOP + 3}">{esc(name)}</text>')
    for pos, text in ticks:
        px = x(pos)
        body.append(f'<line x1="{px:.1f}" y1="{h}" x2="{px:.1f}" y2="{h + 4}" stroke="#333"/>')
        body.append(f'<text x="{px:.1f}" y="{h + 16}" text-anchor="middle">{esc(text)}</text>')
    return _frame(title, x_label, y_label, body)


def scatter_chart(
    series: Sequence[tuple[str, Sequence[tuple[float, float, str]]]],
    *,
    title: str,
    x_label: str,
    y_label: str,
) -> str:
    """Labelled points joined per series (name, points (x, y, label)), in the order given,
    with round axis ticks and a legend: the R-U map's drawing."""
    h = HEIGHT - BOTTOM
    xs = [p[0] for _, pts in series for p in pts]
    ys = [p[1] for _, pts in series for p in pts]
    xt = nice_ticks(min(xs + [0.0]), max(xs + [0.0]))
    yt = nice_ticks(min(ys + [0.0]), max(ys + [0.0]))
    x = Scale(xt[0], xt[-1], LEFT + 6, WIDTH - RIGHT - 24)
    y = Scale(yt[0], yt[-1], h, TOP + 14)
    body = _y_axis(yt, y)
    for t in xt:
        body.append(f'<line x1="{x(t):.1f}" y1="{h}" x2="{x(t):.1f}" y2="{h + 4}" stroke="#333"/>')
        body.append(f'<text x="{x(t):.1f}" y="{h + 16}" text-anchor="middle">{esc(label(t))}</text>')
    for s, (name, pts) in enumerate(series):
        colour = PALETTE[s % len(PALETTE)]
        path = " ".join(f"{x(a):.1f},{y(b):.1f}" for a, b, _ in pts)
        body.append(f'<polyline points="{path}" fill="none" stroke="{colour}" stroke-width="1.3"/>')
        for a, b, text in pts:
            body.append(f'<circle cx="{x(a):.1f}" cy="{y(b):.1f}" r="3.5" fill="{colour}">'
                        f"<title>{esc(name)} {esc(text)}</title></circle>")
            dy = -5 if s % 2 == 0 else 13  # series alternate above and below, apart where they meet
            body.append(f'<text x="{x(a) + 5:.1f}" y="{y(b) + dy:.1f}" fill="{colour}">{esc(text)}</text>')
        body.append(f'<rect x="{LEFT + 10}" y="{TOP + 2 + 14 * s}" width="10" height="10" fill="{colour}"/>')
        body.append(f'<text x="{LEFT + 24}" y="{TOP + 11 + 14 * s}">{esc(name)}</text>')
    return _frame(title, x_label, y_label, body)
