"""Figures for `testhelix report`: expected joint score against panel size, per schedule.

Uses matplotlib's object API on an Agg canvas directly (no pyplot), so drawing never touches a
display or the global backend of whoever imports this module.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib


def say_if_building_font_cache() -> None:
    """Matplotlib builds its font cache on first use, silently, for up to a minute: say so first."""
    if not any(Path(matplotlib.get_cachedir()).glob("fontlist-v*.json")):
        print("building Matplotlib's font cache (first use only; this can take a minute)...", file=sys.stderr)


say_if_building_font_cache()   # before the imports below, which build it

from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402 - after the note above
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import MaxNLocator  # noqa: E402

from testhelix.core.atomic import atomic_path  # noqa: E402
from testhelix.prism.panel import SCHEDULES, CurvePoint  # noqa: E402

POOLED = "all configurations"


def plot_panel_curves(curves: Mapping[str, Sequence[CurvePoint]], out: Path, title: str = "") -> Path:
    """One panel per schedule; one line per configuration, the pooled mean (key POOLED) in bold.
    Points that average only the tasks whose panels are that large are drawn dashed and hollow.

    `curves` maps a configuration label to its curve points (every schedule mixed). Writes a PNG.
    """
    fig = Figure(figsize=(12, 4), dpi=110, layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(SCHEDULES), sharey=True)
    for ax, schedule in zip(axes, SCHEDULES):
        for label, points in sorted(curves.items(), key=lambda kv: (kv[0] == POOLED, kv[0])):
            pts = sorted((p for p in points if p.schedule == schedule), key=lambda p: p.k)
            if not pts:
                continue
            pooled = label == POOLED
            full = [p for p in pts if p.tasks == p.all_tasks]
            line = ax.plot(
                [p.k for p in full],
                [100 * p.expected_joint for p in full],
                marker="o",
                markersize=3 if not pooled else 5,
                linewidth=2.5 if pooled else 1.0,
                color="black" if pooled else None,
                alpha=1.0 if pooled else 0.7,
                label=label,
            )
            partial = [p for p in pts if p.tasks < p.all_tasks]
            if partial:  # points over only the tasks with larger panels: dashed, hollow, from the last full one
                joined = full[-1:] + partial
                ax.plot([p.k for p in joined], [100 * p.expected_joint for p in joined], linestyle="--",
                        marker="o", markerfacecolor="none", markersize=3 if not pooled else 5,
                        linewidth=2.5 if pooled else 1.0, color=line[0].get_color() if line else None,
                        alpha=1.0 if pooled else 0.7)
        ax.set_title(f"{schedule} additions")
        ax.set_xlabel("panel size k (reference included)")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("expected Joint Success Function (%)")
    axes[0].set_ylim(0, 103)
    handles, labels = axes[0].get_legend_handles_labels()
    if handles:
        fig.legend(handles, labels, loc="outside right upper", fontsize="small")
    if title:
        fig.suptitle(title)
    out = Path(out)

    with atomic_path(out, suffix=".png") as tmp:  # never a partial figure
        fig.savefig(tmp, format="png")
    return out
