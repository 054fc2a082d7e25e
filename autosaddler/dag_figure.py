"""`autosaddler dag --png`: the evolution DAG and what the search did over its iterations, as one PNG.

Left, the DAG: one column per edit from the root, the nodes of a column in iteration order, each
circle large enough for its id, the development score under it. Right, every node by iteration
(integers): the development score of the children that passed the screen, the minibatch success of
the ones screened out, rejected proposals at 0 (never evaluated), and the best development score so
far. The y axis spans the points with a margin (at least 10 points), within 0-100%.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol


class EvolutionDAG(Protocol):
    """What the figure reads of autosaddler.dag.EvolutionDAG (which calls this module: no import back)."""

    graph: Any

    def nodes(self) -> Sequence[Any]: ...

    def depth(self, node_id: str) -> int: ...

COLOURS = {"root": "#4c72b0", "developed": "#55a868", "screened_out": "#999999", "rejected": "#c44e52"}
LABELS = {"root": "initial strategy", "developed": "developed", "screened_out": "screened out",
          "rejected": "rejected"}


def draw(dag: EvolutionDAG, path: Path) -> None:
    import matplotlib

    from testhelix.prism.plots import say_if_building_font_cache

    say_if_building_font_cache()
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.ticker import MaxNLocator, PercentFormatter

    columns: dict[int, list[str]] = defaultdict(list)
    for n in dag.nodes():
        columns[dag.depth(n.node_id)].append(n.node_id)
    tallest = max(len(ids) for ids in columns.values())
    fig, (ax_dag, ax_dev) = plt.subplots(1, 2, figsize=(13, max(5.0, 0.55 * tallest + 2)),
                                         gridspec_kw={"width_ratios": [max(1.0, 0.5 * len(columns)), 2]})
    pos = {nid: (float(depth), (tallest - 1) / 2 - i) for depth, ids in columns.items() for i, nid in enumerate(ids)}
    for a, b in dag.graph.edges():
        ax_dag.annotate("", xy=pos[b], xytext=pos[a], arrowprops={"arrowstyle": "-|>", "color": "#8a94a3",
                                                                   "shrinkA": 14, "shrinkB": 14})
    for n in dag.nodes():
        x, y = pos[n.node_id]
        ax_dag.scatter([x], [y], s=900, color=COLOURS.get(n.status, "#777777"), zorder=2)
        ax_dag.text(x, y, n.node_id, ha="center", va="center", fontsize=8, color="white", zorder=3)
        if n.dev_score is not None:
            ax_dag.text(x, y - 0.3, f"{100 * n.dev_score:.1f}%", ha="center", va="top", fontsize=7)
    ax_dag.set_xlim(-0.6, max(columns) + 0.6)
    ax_dag.set_ylim(-(tallest - 1) / 2 - 0.9, (tallest - 1) / 2 + 0.6)
    ax_dag.set_title("Evolution DAG (columns: edits from the root)", fontsize=10)
    ax_dag.axis("off")
    ax_dag.legend(handles=[Line2D([], [], marker="o", ls="", color=c, markersize=9, label=LABELS[s])
                           for s, c in COLOURS.items()], loc="upper center", bbox_to_anchor=(0.5, 0.0),
                  ncol=2, fontsize=8, frameon=False)
    _scores(ax_dev, dag)
    ax_dev.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax_dev.yaxis.set_major_formatter(PercentFormatter(1.0))
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _scores(ax: object, dag: EvolutionDAG) -> None:
    """The right-hand plot: every node by iteration (see the module docstring)."""
    from matplotlib.axes import Axes

    assert isinstance(ax, Axes)
    order = dag.nodes()
    developed = [(n.iteration, n.dev_score) for n in order if n.dev_score is not None]
    screened = [(n.iteration, sum(n.child_outcomes.values()) / len(n.child_outcomes))
                for n in order if n.status == "screened_out" and n.child_outcomes]
    rejected = [(n.iteration, 0.0) for n in order if n.status == "rejected"]
    best, running = [], None
    for it in sorted({n.iteration for n in order}):
        scores = [s for i, s in developed if i == it]
        if scores:
            running = max(scores + ([running] if running is not None else []))
        if running is not None:
            best.append((it, running))
    for points, style, colour, label in (
            (developed, "o", COLOURS["developed"], "development score (passed the screen)"),
            (screened, "s", COLOURS["screened_out"], "minibatch success (screened out)"),
            (rejected, "x", COLOURS["rejected"], "rejected (not evaluated; at 0)")):
        if points:
            ax.plot([p[0] for p in points], [p[1] for p in points], style, color=colour, label=label, ls="")
    if best:
        ax.step([p[0] for p in best], [p[1] for p in best], where="post", color="#333333", lw=1.2,
                label="best development so far")
    values = [p[1] for p in developed + screened + rejected]
    low, high = (min(values), max(values)) if values else (0.0, 1.0)
    pad = max(0.05, (0.1 - (high - low)) / 2 + 0.02)
    ax.set_ylim(max(0.0, low - pad) - 0.02, min(1.0, high + pad) + 0.02)
    iterations = [n.iteration for n in order]
    ax.set_xlim(min(iterations) - 0.5, max(iterations) + 0.5)
    ax.set_xlabel("iteration")
    ax.set_ylabel("success rate")
    ax.set_title("What the search did, by iteration", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="best")
