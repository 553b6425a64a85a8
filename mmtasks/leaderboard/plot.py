"""Figures of the leaderboard's charts for reports (matplotlib, Agg backend, PNG/SVG).

Per benchmark: ``<id>_bar`` (every column, one panel per scale), ``<id>_radar`` (the
abilities) and one figure per breakdown chart (``<id>_<chart id>``, one panel per
metric that has data). Missing values are left out (a gap, or "n/a" under a bar),
never drawn as 0.

The figures of one call are one set of files, written by
:func:`mmtasks.results.writer.write_file_set`: switched as one, never through a link planted at
a name, and a failure leaves the previous figures whole.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from mmtasks.errors import ConfigError
from mmtasks.leaderboard.schema import Benchmark, Chart, ChartOption, Column, Entry, Leaderboard
from mmtasks.results.writer import Content, write_file_set

if TYPE_CHECKING:  # the plot extra
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

FORMATS = ("png", "svg")
#: the page's palette (leaderboard/app.js), so a model keeps its colour in the page and the figures
_COLORS = ["#2563eb", "#dc2626", "#059669", "#d97706", "#7c3aed", "#0891b2", "#db2777", "#65a30d",
           "#475569", "#9333ea", "#ea580c", "#0d9488", "#be123c", "#4f46e5", "#a16207", "#15803d"]


def _pyplot() -> ModuleType:
    """pyplot on the Agg backend, or a clear error when matplotlib is not installed."""
    try:
        import matplotlib
    except ImportError as err:
        raise ConfigError("plotting needs matplotlib", hint="pip install 'mmtasks[plot]'") from err
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def plot_leaderboard(
    board: Leaderboard,
    out: Path,
    *,
    formats: Sequence[str] = FORMATS,
    include_paper: bool = False,
) -> list[Path]:
    """Write every figure that has data; returns the files written."""
    bad = [fmt for fmt in formats if fmt not in FORMATS]
    if bad or not formats:
        raise ConfigError(f"unknown figure format(s) {', '.join(bad) or '(none)'}", hint="use png and/or svg")
    plt = _pyplot()
    files: dict[str, Content] = {}
    for bench in board.benchmarks:
        entries = [e for e in bench.entries if include_paper or e.source == "run"]
        if not entries:
            continue
        figures = {f"{bench.id}_bar": _bar_figure(plt, bench, entries)}
        radar = [c for c in bench.columns if c.radar]
        if radar:
            figures[f"{bench.id}_radar"] = _radar_figure(plt, bench, radar, entries)
        for chart in bench.charts:
            figure = _breakdown_figure(plt, bench, chart, entries)
            if figure is not None:
                figures[f"{bench.id}_{chart.id}"] = figure
        for stem, figure in figures.items():
            for fmt in formats:
                buffer = io.BytesIO()
                figure.savefig(buffer, format=fmt, dpi=150, bbox_inches="tight")
                files[f"{stem}.{fmt}"] = buffer.getvalue()
            plt.close(figure)
    if not files:
        return []
    return write_file_set(out, files, what="figures", kind="figures")


def _label(entry: Entry) -> str:
    """A legend label: mathtext-safe (``$`` escaped), short, paper rows marked."""
    name = entry.model + (f" + {entry.strategy}" if entry.source == "paper" and entry.strategy else "")
    text = name if len(name) <= 48 else name[:47] + "…"
    text = text.replace("$", r"\$")
    if entry.chance_judge:
        return f"{text} (chance-level judge)"
    return f"{text} (paper)" if entry.source == "paper" else text


def _color(index: int) -> str:
    return _COLORS[index % len(_COLORS)]


def _value(entry: Entry, column: Column) -> float:
    cell = entry.values.get(column.key)
    return cell.value if cell is not None and cell.value is not None else math.nan


def _bar_figure(plt: ModuleType, bench: Benchmark, entries: list[Entry]) -> Figure:
    # one panel per scale, so 0-5 scores and 0-1 precisions are not drawn on one axis
    groups: dict[tuple[float, float, str], list[Column]] = {}
    for column in bench.columns:
        groups.setdefault((column.scale_min, column.scale_max, column.unit), []).append(column)
    widths = [len(columns) + 0.6 for columns in groups.values()]
    fig, axes = plt.subplots(
        1, len(groups), figsize=(max(6.0, 0.9 * sum(widths) + 0.35 * len(entries)), 4.2),
        gridspec_kw={"width_ratios": widths}, squeeze=False,
    )
    width = 0.8 / len(entries)
    for ax, ((low, high, unit), columns) in zip(axes[0], groups.items()):
        for i, entry in enumerate(entries):
            for c, column in enumerate(columns):
                x = c + (i - (len(entries) - 1) / 2) * width
                y = _value(entry, column)
                if math.isnan(y):
                    ax.text(x, low, "n/a", ha="center", va="bottom", fontsize=6, rotation=90, color="#64748b")
                else:
                    ax.bar(x, y, width, color=_color(i), hatch="//" if entry.source == "paper" else None,
                           edgecolor="white", linewidth=0.5)
        ax.set_xticks(range(len(columns)), [c.label for c in columns], rotation=30, ha="right")
        ax.set_ylim(low, high)
        ax.set_ylabel(f"score ({_scale_text(low, high, unit)})")
        _style_axes(ax)
    fig.suptitle(f"{bench.title}: all columns", x=0.01, ha="left", fontsize=12, fontweight="bold")
    fig.tight_layout()
    _legend(fig, entries, range(len(entries)), bars=True)
    return fig


def _radar_figure(plt: ModuleType, bench: Benchmark, columns: list[Column], entries: list[Entry]) -> Figure:
    fig = plt.figure(figsize=(6.4, 6.0))
    ax = fig.add_subplot(projection="polar")
    ax.set_theta_offset(math.pi / 2)  # first axis at the top, clockwise, as on the page
    ax.set_theta_direction(-1)
    angles = [2 * math.pi * k / len(columns) for k in range(len(columns))]
    low, high = columns[0].scale_min, columns[0].scale_max
    for i, entry in enumerate(entries):
        ys = [_value(entry, column) for column in columns]
        closed_x, closed_y = angles + angles[:1], ys + ys[:1]
        style = "--" if entry.source == "paper" else "-"
        ax.plot(closed_x, closed_y, style, color=_color(i), linewidth=1.6, marker="o", markersize=3, label=_label(entry))
        if not any(math.isnan(y) for y in ys):
            ax.fill(closed_x, closed_y, color=_color(i), alpha=0.08)
    ax.set_xticks(angles, [c.label for c in columns])
    ax.set_ylim(low, high)
    ax.tick_params(axis="y", labelsize=7, colors="#64748b")
    ax.set_title(f"{bench.title}: abilities ({_scale_text(low, high, columns[0].unit)})", fontweight="bold", pad=18)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.08), ncol=2, fontsize=8, frameon=False)
    return fig


def _breakdown_figure(plt: ModuleType, bench: Benchmark, chart: Chart, entries: list[Entry]) -> Figure | None:
    panels = [(option, series) for option in chart.options if (series := _series(chart, option, entries))]
    if not panels or not chart.buckets:
        return None
    ncols = min(len(panels), 4)
    nrows = math.ceil(len(panels) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.6 * ncols + 0.6, 3.0 * nrows + 0.8), squeeze=False)
    xs = list(range(len(chart.buckets)))
    for ax, (option, series) in zip(axes.flat, panels):
        n_series = len(series)
        for k, (index, entry, ys) in enumerate(series):
            if chart.style == "bars":
                width = 0.8 / n_series
                shifted = [x + (k - (n_series - 1) / 2) * width for x in xs]
                present = [(x, y) for x, y in zip(shifted, ys) if not math.isnan(y)]
                ax.bar([x for x, _ in present], [y for _, y in present], width, color=_color(index), label=_label(entry))
            else:
                ax.plot(xs, ys, "-o", color=_color(index), markersize=4, linewidth=1.6, label=_label(entry))
        ax.set_xticks(xs, chart.buckets, rotation=30 if len(chart.buckets) > 8 else 0)
        ax.set_xlim(-0.6, len(xs) - 0.4)
        ax.set_ylim(option.scale_min, option.scale_max)
        ax.set_title(option.label, fontsize=10)
        ax.set_xlabel(chart.x_label, fontsize=8)
        _style_axes(ax)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    axes.flat[0].set_ylabel(chart.y_label)
    fig.suptitle(f"{bench.title}: {chart.title.lower()}", x=0.01, ha="left", fontsize=12, fontweight="bold")
    fig.tight_layout()
    shown = sorted({index for _, series in panels for index, _, _ in series})
    _legend(fig, [entries[i] for i in shown], shown, bars=chart.style == "bars")
    return fig


def _series(chart: Chart, option: ChartOption, entries: list[Entry]) -> list[tuple[int, Entry, list[float]]]:
    """(colour index, entry, value per bucket or NaN) for entries with any data for ``option``."""
    found = []
    for index, entry in enumerate(entries):
        buckets = entry.breakdowns.get(option.task, {}).get(chart.dimension, {})
        ys = [buckets.get(b, {}).get(option.metric, math.nan) for b in chart.buckets]
        if any(not math.isnan(y) for y in ys):
            found.append((index, entry, ys))
    return found


def _scale_text(low: float, high: float, unit: str) -> str:
    return f"{low:g}-{high:g}{unit}"


def _style_axes(ax: Axes) -> None:
    ax.grid(axis="y", color="#e2e8f0", linewidth=0.8)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)


def _legend(fig: Figure, entries: Sequence[Entry], color_indexes: Sequence[int], *, bars: bool) -> None:
    """One legend under the figure, built from the entries (not from whichever axes has them all)."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    handles = [
        Patch(facecolor=_color(i), hatch="//" if e.source == "paper" else None, edgecolor="white")
        if bars
        else Line2D([], [], color=_color(i), marker="o", linestyle="--" if e.source == "paper" else "-")
        for e, i in zip(entries, color_indexes)
    ]
    if handles:
        fig.legend(handles, [_label(e) for e in entries], loc="upper center", bbox_to_anchor=(0.5, 0.0),
                   ncol=min(3, len(handles)), fontsize=8, frameon=False)
