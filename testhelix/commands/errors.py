"""`testhelix errors sample|agreement`: error analysis of failed trajectories (docs/error-analysis.md):
a seeded sample to annotate, and two annotators' agreement.

A failed trajectory is a task result with joint success S = 0 (a missing suite included). Its
agent family is the model of its run label (`<model>/<configuration>`); per family the sample is
drawn from the configuration with the highest Joint Success Function unless one is named. With the
seed (42 by default) `per_family` failed trajectories are drawn per family, then those that ran into
a time limit (an agent session ended by its deadline, or an execution of the initial program or the
reference timed out) are set aside, as the error-analysis protocol does: the sheet holds the rest.

An annotator labels each row with one of seven subtypes (SUBTYPES); the subtypes aggregate into the
three parent categories coverage gap, faulty check and execution logic error. `agreement` reads two
filled sheets and computes Cohen's kappa on the subtype labels, per subtype (that subtype against
the rest), on the parent labels and per parent, and the parent-category counts of each annotator
and of the rows both labelled alike.
"""

from __future__ import annotations

import csv
import io
import json
import random
from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import asdict, dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import click

from testhelix.commands.plumbing import json_option, print_json
from testhelix.core import atomic
from testhelix.core.errors import UserError
from testhelix.core.inputs import InputFile, OutputFile, RunDir
from testhelix.core.readers import read_csv, read_jsonl
from testhelix.store.runstore import RunStore
from testhelix.view.trajectories import safe_name, trajectory_files

# The seed names the three parents and two subtypes (missing inputs, weak checks); the other five
# subtypes and every description are this project's own.
SUBTYPES: dict[str, tuple[str, str]] = {
    "missing_inputs": ("coverage gap", "the suite never gives an input the task's contract names"),
    "missing_scenario": ("coverage gap", "a required behaviour or path is never reached"),
    "weak_check": ("faulty check", "assertions too loose to reject a wrong program"),
    "wrong_expectation": ("faulty check", "an expected value the contract does not require or contradicts"),
    "incidental_detail": ("faulty check", "asserts an incidental detail (message text, repr, private name)"),
    "setup_error": ("execution logic error", "imports, fixtures or environment fail before any check runs"),
    "test_logic_error": ("execution logic error", "the test's own code is wrong: crashes, order or time dependence"),
}
PARENTS = ("coverage gap", "faulty check", "execution logic error")
LABEL_COLUMNS = ("subtype", "notes")
SHEET_COLUMNS = ("trajectory_id", "family", "run_label", "task_id", "trajectory", "final_suite_path", "final_suite",
                 "submission", "initial", "reference", *LABEL_COLUMNS)
MAX_SUITE_CHARS = 60_000  # a CSV field holds at most 64 KiB (testhelix/core/readers.py)


@dataclass(frozen=True)
class SheetRow:
    trajectory_id: str
    family: str
    run_label: str
    task_id: str
    trajectory: str          # the folder holding the trajectory files (pair*/trajectory-*.json)
    final_suite_path: str
    final_suite: str
    submission: str
    initial: str             # the submitted suite's status on the initial program
    reference: str
    subtype: str = ""
    notes: str = ""


@dataclass(frozen=True)
class Sample:
    rows: tuple[SheetRow, ...]
    by_family: dict[str, dict[str, Any]]  # family -> configuration, failed, sampled, timeouts excluded


def _family(label: str) -> tuple[str, str]:
    model, _, config = label.rpartition("/")
    return (model or label), config


def _statuses(store: RunStore) -> dict[tuple[str, str], dict[str, tuple[str, str]]]:
    out: dict[tuple[str, str], dict[str, tuple[str, str]]] = {}
    for o in store.task_outcomes():
        out.setdefault((o["run_label"], o["task_id"]), {})[o["role"]] = (o["status"] or "", o["reason"] or "")
    return out


def timed_out(detail: dict, outcomes: dict[str, tuple[str, str]]) -> bool:
    sessions = [exit_ for pair in detail.get("pairs", []) for exit_ in pair.get("sessions", [])]
    if any(s in ("deadline", "DeadlineExceeded") for s in sessions):
        return True
    return any(reason.startswith("timeout") for role, (_, reason) in outcomes.items() if role in ("initial", "reference"))


def _suite(run_dir: Path, label: str, task_id: str, detail: dict) -> tuple[str, str]:
    work = run_dir / "work" / safe_name(label) / task_id
    pair = detail.get("pair")
    folder = work / "merged-suite" if "merge" in str(detail.get("submission", "")) else work / f"pair{pair}" / "suite"
    if pair is None or not folder.is_dir():
        return "", "(no suite submitted)" if pair is None else "(suite folder not found)"
    text = "\n\n".join(f"# file: {p.relative_to(folder).as_posix()}\n{p.read_text(errors='replace')}"
                       for p in sorted(folder.rglob("*.py")))
    if len(text) > MAX_SUITE_CHARS:
        text = text[:MAX_SUITE_CHARS] + f"\n... (cut at {MAX_SUITE_CHARS} characters; the whole suite is at the path)"
    return str(folder), text


def sample_failed(run_dirs: Sequence[Path], per_family: int = 50, seed: int = 42,
                  configuration: str | None = None) -> Sample:
    """The seeded sample of failed trajectories per agent family, timeouts set aside."""
    candidates: dict[str, dict[str, list[tuple[Path, dict, dict]]]] = {}  # family -> config -> results
    for run_dir in run_dirs:
        store = RunStore(run_dir, read_only=True)
        try:
            outcomes = _statuses(store)
            for r in store.task_results():
                family, config = _family(r["run_label"])
                r["outcomes"] = outcomes.get((r["run_label"], r["task_id"]), {})
                detail = json.loads(r["detail"] or "{}")
                candidates.setdefault(family, {}).setdefault(config, []).append((Path(run_dir), r, detail))
        finally:
            store.close()
    if configuration is not None and not any(configuration in configs for configs in candidates.values()):
        raise UserError(f"--config {configuration}: no run label ends in /{configuration} in these runs")
    rows, summary = [], {}
    for family in sorted(candidates):
        configs = candidates[family]
        if configuration is not None and configuration not in configs:
            continue
        best = configuration or max(sorted(configs), key=lambda c: Fraction(sum(r["S"] or 0 for _, r, _ in configs[c]),
                                                                           len(configs[c])))
        failed = sorted((x for x in configs[best] if not x[1]["S"]), key=lambda x: (str(x[0]), x[1]["task_id"]))
        drawn = random.Random(seed).sample(failed, min(per_family, len(failed)))
        kept = [x for x in drawn if not timed_out(x[2], x[1]["outcomes"])]
        summary[family] = {"configuration": best, "failed": len(failed), "sampled": len(drawn),
                           "timeouts_excluded": len(drawn) - len(kept), "annotate": len(kept)}
        for run_dir, r, detail in kept:
            folder, text = _suite(run_dir, r["run_label"], r["task_id"], detail)
            traj = trajectory_files(run_dir, r["run_label"], r["task_id"])
            rows.append(SheetRow(
                trajectory_id=f"{r['run_label']}|{r['task_id']}", family=family, run_label=r["run_label"],
                task_id=r["task_id"], trajectory=str(traj[0].parent.parent) if traj else "(no trajectory files)",
                final_suite_path=folder, final_suite=text, submission=str(detail.get("submission", "")),
                initial=":".join(r["outcomes"].get("initial", ("missing", ""))).rstrip(":"),
                reference=":".join(r["outcomes"].get("reference", ("missing", ""))).rstrip(":")))
    return Sample(tuple(rows), summary)


def write_sheet(rows: Iterable[SheetRow], path: Path) -> None:
    """CSV (by the .csv suffix) or JSON Lines (any other suffix); label columns empty."""
    dicts = [asdict(r) for r in rows]
    if path.suffix.lower() == ".csv":
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=SHEET_COLUMNS)
        writer.writeheader()
        writer.writerows(dicts)
        atomic.write_text(path, buf.getvalue())
    else:
        atomic.write_text(path, "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in dicts))


def read_labels(path: Path) -> dict[str, str]:
    """trajectory_id -> subtype of one filled sheet; every row must carry a known subtype."""
    if path.suffix.lower() == ".csv":
        _, numbered = read_csv(path, required=("trajectory_id", "subtype"))
        records = [(f"row {i} (ending on line {n})", row) for i, (n, row) in enumerate(numbered, 1)]
    else:
        records = []
        for n, rec in read_jsonl(path):
            if isinstance(rec, UserError):
                raise rec
            if not isinstance(rec, dict) or "trajectory_id" not in rec:
                raise UserError(f"{path}: line {n}: a record is an object with a trajectory_id")
            records.append((f"line {n}", rec))
    labels: dict[str, str] = {}
    for where, rec in records:
        tid, subtype = str(rec["trajectory_id"]), str(rec.get("subtype") or "").strip()
        if subtype not in SUBTYPES:
            raise UserError(f"{path}: {where}: subtype {subtype!r} is not one of {', '.join(SUBTYPES)}")
        if tid in labels:
            raise UserError(f"{path}: {where}: trajectory_id {tid!r} appears twice")
        labels[tid] = subtype
    if not labels:
        raise UserError(f"{path}: no labelled rows")
    return labels


def cohen_kappa(first: Sequence[Hashable], second: Sequence[Hashable]) -> float | None:
    """Cohen's kappa of two equally long label sequences; None when chance agreement is 1 (both
    annotators used one and the same label throughout: kappa is undefined)."""
    n = len(first)
    observed = Fraction(sum(a == b for a, b in zip(first, second)), n)
    ca, cb = Counter(first), Counter(second)
    expected = sum(Fraction(ca[k] * cb[k], n * n) for k in ca.keys() | cb.keys())
    return None if expected == 1 else float((observed - expected) / (1 - expected))


def agreement(first: dict[str, str], second: dict[str, str]) -> dict[str, Any]:
    """Kappa on subtypes, per subtype, on parents and per parent; parent counts per annotator."""
    if first.keys() != second.keys():
        only = sorted(first.keys() ^ second.keys())
        raise UserError(f"the two sheets label different trajectories ({len(only)} differ, e.g. {only[0]!r})")
    ids = sorted(first)
    a, b = [first[i] for i in ids], [second[i] for i in ids]
    pa, pb = [SUBTYPES[x][0] for x in a], [SUBTYPES[x][0] for x in b]
    agreed = [x for x, y in zip(pa, pb) if x == y]
    return {
        "n": len(ids), "kappa_subtypes": cohen_kappa(a, b), "kappa_parents": cohen_kappa(pa, pb),
        "per_subtype": {s: {"first": a.count(s), "second": b.count(s),
                            "kappa": cohen_kappa([x == s for x in a], [y == s for y in b])} for s in SUBTYPES},
        "per_parent": {p: {"first": pa.count(p), "second": pb.count(p), "agreed": agreed.count(p),
                           "kappa": cohen_kappa([x == p for x in pa], [y == p for y in pb])} for p in PARENTS},
        "disagreements": [i for i, x, y in zip(ids, a, b) if x != y],
    }


def render_agreement(result: dict) -> str:
    n = result["n"]

    def k(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.3f}"

    lines = [f"Two annotators, {n} trajectories. Cohen's kappa on the subtype labels: {k(result['kappa_subtypes'])}; "
             f"on the parent categories: {k(result['kappa_parents'])}",
             "", f"{'subtype':<20} {'parent':<22} {'first':>6} {'second':>6} {'kappa':>7}"]
    for s, v in result["per_subtype"].items():
        lines.append(f"{s:<20} {SUBTYPES[s][0]:<22} {v['first']:>6} {v['second']:>6} {k(v['kappa']):>7}")
    lines += ["", f"{'parent category':<22} {'first':>12} {'second':>12} {'agreed':>12} {'kappa':>7}"]
    for p, v in result["per_parent"].items():
        cells = [f"{v[w]} ({v[w] / n:.1%})".rjust(12) for w in ("first", "second", "agreed")]
        lines.append(f"{p:<22} {' '.join(cells)} {k(v['kappa']):>7}")
    lines += ["", f"{len(result['disagreements'])} subtype disagreement(s) to adjudicate"
              + (": " + ", ".join(result["disagreements"][:10]) + (" ..." if len(result["disagreements"]) > 10 else "")
                 if result["disagreements"] else "")]
    return "\n".join(lines)


@click.group("errors")
def command() -> None:
    """Annotate failed trajectories: draw a seeded sample, then measure two annotators' agreement."""


@command.command("sample")
@click.argument("run_dirs", nargs=-1, required=True, type=RunDir())
@click.option("--out", "out", required=True, type=OutputFile(),
              help="The annotation sheet: .csv, or JSON Lines for any other suffix.")
@click.option("--per-family", default=50, show_default=True, type=click.IntRange(1, 100_000),
              help="Failed trajectories drawn per agent family (before timeouts are set aside).")
@click.option("--seed", default=42, show_default=True, type=int)
@click.option("--config", "configuration", default=None,
              help="Sample this configuration (A-E) of every family; default: each family's configuration "
                   "with the highest Joint Success Function.")
@json_option
def sample(run_dirs: tuple[Path, ...], out: Path, per_family: int, seed: int, configuration: str | None,
           as_json: bool) -> None:
    """Sample failed trajectories (S = 0) of RUN_DIRS by agent family and write an annotation sheet
    (trajectory folder, task, final suite, empty `subtype` and `notes` columns)."""
    drawn = sample_failed(run_dirs, per_family, seed, configuration)
    write_sheet(drawn.rows, out)
    if as_json:
        print_json({"sheet": str(out), "rows": len(drawn.rows), "by_family": drawn.by_family})
        return
    for family, s in drawn.by_family.items():
        click.echo(f"{family} (configuration {s['configuration']}): {s['failed']} failed, {s['sampled']} drawn "
                   f"with seed {seed}, {s['timeouts_excluded']} timeouts set aside, {s['annotate']} to annotate")
    click.echo(f"wrote {len(drawn.rows)} rows to {out}; label each row's `subtype` with one of: {', '.join(SUBTYPES)}")


@command.command("agreement")
@click.argument("first", type=InputFile())
@click.argument("second", type=InputFile())
@json_option
def agreement_command(first: Path, second: Path, as_json: bool) -> None:
    """Cohen's kappa of two annotators' filled sheets (per subtype and per parent category) and the
    aggregation into the three parent categories."""
    result = agreement(read_labels(first), read_labels(second))
    if as_json:
        print_json(result)
    else:
        click.echo(render_agreement(result))
