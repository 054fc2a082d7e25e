"""bench/validity.py's summary: exact intervals, the gate's exact size and power at the measured
noise discordance, the release-split size needed for power 0.8, and the plot."""

from __future__ import annotations

from pathlib import Path

from scipy.stats import binomtest

from autosaddler.gate import ALPHA
from bench.validity_fixture import gate_power, gate_size, tasks_for_power

STAGES = (("proposed", "proposed"), ("screened in", "screened_in"), ("developed", "developed"),
          ("frozen", "frozen_plant"), ("promoted", "promoted_plant"))
TABLE_EFFECTS = (0.05, 0.10, 0.20)
HEADLINE_WORLD = "planted-0.10"


def interval(k: int, n: int) -> str:
    if n == 0:
        return "0/0"
    ci = binomtest(k, n).proportion_ci(method="exact")
    return f"{k}/{n} = {k / n:.2f} [{ci.low:.2f}, {ci.high:.2f}]"


def summarize(rows: list[dict], noise: float, png: Path, timing: tuple[float, float] | None) -> None:
    """The summary lines and the plot from the study's rows (`--summarize`: rows an interrupted
    study printed; each count is then what it finished)."""
    null = [x for x in rows if x["world"] == "null"]
    worlds = sorted({x["world"] for x in rows if x["world"] != "null"})
    n = rows[0]["n"]
    # a planted gate whose challenger the replicate's null gate already played holds the same task
    # pairs as that null gate (its unplanted tasks): each pair counts once
    null_arms = {(x["replicate"], x.get("challenger")) for x in null}
    distinct = null + [x for x in rows if x["world"] != "null" and (x["replicate"], x.get("challenger")) not in null_arms]
    noise_tasks = sum(x["noise_tasks"] for x in distinct)
    discordance = sum(x["noise_discordant"] for x in distinct) / noise_tasks if noise_tasks else 0.0
    false_promotions = sum(x["promoted"] for x in null)
    size = gate_size(n, discordance)
    print(f"study: {len(null)} null gates ({sum(x['search'] for x in null)} after a search), "
          + ", ".join(f"{sum(x['world'] == w for x in rows)} {w} pipelines" for w in worlds)
          + f"; model sim:weak?noise={noise:g}, configuration C, release split {n} tasks"
          + ("" if timing is None else f"; {timing[0]:.0f} s wall, {timing[1]:.0f} CPU s"))
    print(f"noise discordance: {discordance:.3f} of release tasks differ between two arms (over {noise_tasks} "
          "task pairs: null gates, and the unplanted tasks of planted gates)")
    print(f"null: false promotions {interval(false_promotions, len(null))}; exact gate size at this discordance "
          f"{size:.4f} (nominal alpha {ALPHA}); searches that froze a non-root node "
          f"{sum(not x['frozen_is_root'] for x in null if x['search'])}/{sum(x['search'] for x in null)}")
    powers: dict[str, float] = {}
    for world in worlds:
        group = [x for x in rows if x["world"] == world]
        flipped = group[0]["planted_release"]
        powers[world] = gate_power(n, flipped, discordance / 2, discordance / 2)
        print(f"{world}: the plant flips {flipped} of {n} release tasks ({100 * flipped / n:.1f} points); exact gate "
              f"power given a frozen plant {powers[world]:.3f}")
        for name, key in STAGES:
            print(f"  {name:12s} {interval(sum(x[key] for x in group), len(group))}")
        frozen = [x for x in group if x["frozen_plant"]]
        false = sum(x["promoted"] and not x["frozen_plant"] for x in group)
        print(f"  promoted without the plant (false) {interval(false, len(group))}")
        print(f"  gate promoted a frozen plant {interval(sum(x['promoted'] for x in frozen), len(frozen))} "
              f"(exact power {powers[world]:.3f})")
    print(f"release tasks for exact power 0.8 at noise discordance {discordance:.3f} (each task independently a "
          "planted win with the effect's probability):")
    for effect in TABLE_EFFECTS:
        needed = tasks_for_power(effect, discordance)
        print(f"  effect {100 * effect:4.0f} points: {needed if needed is not None else '> 5000'} tasks")
    if worlds:
        plot(png, rows, worlds, n, discordance)
        print(f"plot: {png}")
    head = [x for x in rows if x["world"] == HEADLINE_WORLD]
    power = powers.get(HEADLINE_WORLD)
    print(f"false_promotions={false_promotions}/{len(null)} planted_promotions={sum(x['promoted_plant'] for x in head)}/"
          f"{len(head)} analytic_power={'n/a' if power is None else f'{power:.2f}'}")


def plot(path: Path, rows: list[dict], worlds: list[str], n: int, discordance: float) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    flips = list(range(0, 22))
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.plot([100 * k / n for k in flips], [gate_power(n, k, discordance / 2, discordance / 2) for k in flips],
            "-o", ms=3, color="#4c72b0", label=f"exact gate power given a frozen plant (n = {n}, discordance "
                                                f"{discordance:.2f})")
    null = [x for x in rows if x["world"] == "null"]
    series = [(0.0, sum(x["promoted"] for x in null), len(null), "null: false promotions")]
    for world in worlds:
        group = [x for x in rows if x["world"] == world]
        frozen = [x for x in group if x["frozen_plant"]]
        effect = 100 * group[0]["planted_release"] / n
        series.append((effect, sum(x["promoted_plant"] for x in group), len(group), "whole pipeline"))
        series.append((effect + 0.4, sum(x["promoted"] for x in frozen), len(frozen), "gate, when the plant was frozen"))
    seen: set[str] = set()
    for x, k, m, name in series:
        if m == 0:
            continue
        ci = binomtest(k, m).proportion_ci(method="exact")
        style = {"null: false promotions": ("s", "#c44e52"), "whole pipeline": ("o", "black"),
                 "gate, when the plant was frozen": ("^", "#55a868")}[name]
        ax.errorbar([x], [k / m], yerr=[[k / m - ci.low], [ci.high - k / m]], fmt=style[0], color=style[1], capsize=3,
                    label=None if name in seen else f"measured: {name} (95% exact CI)")
        seen.add(name)
    ax.axhline(ALPHA, color="#999999", lw=0.8)
    ax.set_xlabel("planted effect on the release split (points)")
    ax.set_ylabel("probability of promotion")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title("Search plus release gate (simulated models, test fixture)")
    ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
