"""Small charts drawn on the server as SVG: horizontal bars, and days of grouped bars."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from markupsafe import Markup, escape

COLOURS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728")


def bars(items: Sequence[tuple[str, int]], width: int = 420) -> Markup:
    """One labelled horizontal bar per item, with its number."""
    if not items:
        return Markup("<p>None yet.</p>")
    top = max(value for _, value in items) or 1
    row, label_w = 22, 130
    parts = []
    for n, (label, value) in enumerate(items):
        y = n * row
        length = round((width - label_w - 50) * value / top)
        parts.append(
            f'<text x="{label_w - 6}" y="{y + 15}" text-anchor="end">{escape(label)}</text>'
            f'<rect x="{label_w}" y="{y + 3}" width="{length}" height="{row - 6}" '
            f'fill="{COLOURS[0]}"><title>{escape(label)}: {value}</title></rect>'
            f'<text x="{label_w + length + 4}" y="{y + 15}">{value}</text>'
        )
    height = row * len(items)
    return Markup(
        f'<svg class="chart" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-size="12">{"".join(parts)}</svg>'
    )


def daily(days: Sequence[str], series: Mapping[str, Sequence[int]], width: int = 560) -> Markup:
    """Grouped bars per day (one colour per series), with a legend and the first/last day."""
    if not days:
        return Markup("<p>No day yet.</p>")
    top = max((v for values in series.values() for v in values), default=0) or 1
    plot_h, base = 120, 140
    slot = (width - 20) / len(days)
    bar = max(1.0, slot / (len(series) + 1))
    parts = []
    for d, day in enumerate(days):
        for s, (name, values) in enumerate(series.items()):
            value = values[d]
            h = round(plot_h * value / top)
            x = 10 + d * slot + s * bar
            parts.append(
                f'<rect x="{x:.1f}" y="{base - h}" width="{bar - 1:.1f}" height="{h}" '
                f'fill="{COLOURS[s % len(COLOURS)]}"><title>{escape(day)} {escape(name)}: '
                f"{value}</title></rect>"
            )
    parts.append(f'<text x="10" y="{base + 14}">{escape(days[0])}</text>')
    parts.append(
        f'<text x="{width - 10}" y="{base + 14}" text-anchor="end">{escape(days[-1])}</text>'
    )
    parts.append(f'<text x="10" y="12">max {top}</text>')
    legend = "".join(
        f'<tspan fill="{COLOURS[s % len(COLOURS)]}">■ {escape(name)}</tspan> '
        for s, name in enumerate(series)
    )
    parts.append(f'<text x="{width - 10}" y="12" text-anchor="end">{legend}</text>')
    return Markup(
        f'<svg class="chart" role="img" width="{width}" height="{base + 20}" '
        f'viewBox="0 0 {width} {base + 20}" font-size="12">{"".join(parts)}</svg>'
    )
