"""`autosaddler gate`: the release gate, from recorded outcomes or by running both strategies."""

from __future__ import annotations

import csv
import uuid
from dataclasses import dataclass
from pathlib import Path

import click

from autosaddler.config import load_config
from autosaddler.gate import (
    GateResult,
    PairedOutcome,
    decide,
    explain,
    read_outcomes_csv,
    render,
    same_strategy_verdict,
)
from autosaddler.gate_clusters import ClusterDiagnostics, diagnose_clusters, render_clusters
from autosaddler.ledger import REUSE_NOTE, ReleaseLedger, SpentRelease, check_release, earlier_looks, new_entry
from autosaddler.search_mlflow import track_gate_command
from autosaddler.session import helix_evaluator, load_pack_splits, refuse_spent, search_setup
from autosaddler.store import record_spent_split
from testhelix.commands.plumbing import json_option, print_json
from testhelix.commands.run_options import MODEL, RunOptions, setup_options
from testhelix.core import atomic
from testhelix.core.errors import UserError
from testhelix.core.inputs import InputFile, NewRunDir, PackDir
from testhelix.core.plaintext import clip, output_width, wrap
from testhelix.llm.modelref import ModelRef
from testhelix.parallel.progress import TaskProgress
from testhelix.store.gates import GateDecision, record_gate_decision
from testhelix.store.runstore import RunStore
from testhelix.strategy.model import is_frozen_strategy_file, load_strategy
from testhelix.view.mlflow_log import mlflow_option, requested_mlflow_uri


@dataclass(frozen=True)
class GateRun:
    result: GateResult | None         # None: decided without evaluating (`skipped` says why)
    fresh: bool                       # False: --allow-reuse on tasks an earlier gate had spent
    replay_of: SpentRelease | None    # the same test decided before: its recorded decision
    diagnostics: ClusterDiagnostics | None = None
    ledger: ReleaseLedger | None = None
    skipped: str | None = None        # the challenger is the baseline and the model is deterministic
    same_strategy_note: str | None = None   # the challenger is the baseline, evaluated anyway: why


def run_gate(challenger_file: Path, baseline_file: Path, pack: Path, split: str, model: ModelRef, run_dir: Path,
             split_file: Path | None, preset: str, allow_reuse: bool = False, options: RunOptions | None = None,
             progress: bool = False) -> GateRun:
    """Evaluate both strategies with the same model on the release split, decide, record, and mark
    its tasks as spent for this run and in the machine's release ledger. The same challenger and
    baseline with the same model on the same tasks replays the recorded decision instead."""
    challenger, baseline = load_strategy(challenger_file), load_strategy(baseline_file)
    splits = load_pack_splits(pack, split_file)
    ids = splits.ids(split)
    cfg = load_config(preset)
    model.require_credentials()   # a hosted model without its key: refused before anything is created
    setup = search_setup(options or RunOptions(), model, cfg)   # checked before anything is stored
    same = challenger.content_hash() == baseline.content_hash()
    evaluates, note = same_strategy_verdict(model, len(ids), challenger.content_hash()) if same else (True, "")
    if not evaluates:
        Path(run_dir).mkdir(parents=True, exist_ok=True)
        atomic.write_text(Path(run_dir) / "gate_report.md", _skipped_report(challenger_file, challenger.content_hash(),
                                                                            model, split, pack, note))
        return GateRun(None, True, None, skipped=note)
    ledger = ReleaseLedger.for_scope(cfg.release_ledger, run_dir)
    replay, earlier = check_release(ledger, pack=splits.split.pack, pack_digest=splits.split.pack_digest, split=split,
                                    task_ids=ids, challenger_hash=challenger.content_hash(),
                                    baseline_hash=baseline.content_hash(), model=model.given, allow_reuse=allow_reuse)
    if replay is not None and replay.result is not None:
        data = dict(replay.result)
        data["ci95"], data["ci99"] = tuple(data["ci95"]), tuple(data["ci99"])
        return GateRun(GateResult(**data), True, replay, _replayed_clusters(replay), ledger)
    looks = earlier_looks([ledger, ReleaseLedger()], splits.split.pack_digest)
    reused = bool(earlier)
    if reused:
        click.echo(f"warning: {REUSE_NOTE}", err=True)
    if same:
        click.echo(f"note: {note}", err=True)
    store = RunStore(run_dir, command="autosaddler gate", allowed={"search", "gate"})
    try:
        store.refuse_other_kinds({"search", "gate"}, "autosaddler gate")
        if not allow_reuse:
            refuse_spent(store, splits.split.pack, split)
        with helix_evaluator(store, run_dir, splits.tasks, model, cfg, "gate", setup) as evaluator, \
                TaskProgress("release gate", total=2 * len(ids), enabled=progress) as bar:  # both arms, known now
            evaluator.runner.progress = bar
            # up to `jobs` tasks at once, same results for any `jobs`; each arm is an evaluation of its
            # own (its own label, so its own sampling seed), even when both arms hold the same strategy
            c = evaluator.evaluate(challenger, ids, evaluator.label(challenger, "challenger"))
            b = evaluator.evaluate(baseline, ids, evaluator.label(baseline, "baseline"))
        outcomes = [PairedOutcome(t, c[t].success, b[t].success) for t in ids]
        result = decide(outcomes)
        clusters = diagnose_clusters(outcomes, {t: _kata(splits.tasks.get(t)) for t in ids}, looks)
        gate_id = f"gate-{uuid.uuid4().hex[:8]}"
        with store.transaction():
            record_gate_decision(store, GateDecision(
                gate_id=gate_id, challenger_hash=challenger.content_hash(), baseline_hash=baseline.content_hash(),
                split=split, model=model.given, n=result.n, wins=result.wins, losses=result.losses,
                challenger_successes=result.challenger_successes, baseline_successes=result.baseline_successes,
                p_value=result.p_value, ci95=list(result.ci95), ci99=list(result.ci99), promoted=result.promoted))
            record_spent_split(store, splits.split.pack, split, gate_id)
        ledger.record(new_entry(pack=splits.split.pack, pack_digest=splits.split.pack_digest, split=split, task_ids=ids,
                                challenger_hash=challenger.content_hash(), baseline_hash=baseline.content_hash(),
                                model=model.given, run_dir=run_dir, gate_id=gate_id, result=result.to_json(),
                                reused=reused))
        with atomic.atomic_path(Path(run_dir) / "gate_outcomes.csv") as tmp, tmp.open("w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(["task", "challenger", "baseline"])
            writer.writerows((o.task, o.challenger, o.baseline) for o in outcomes)
        atomic.write_text(Path(run_dir) / "gate_report.md",
            f"# Release gate\n\nchallenger: {challenger_file} ({challenger.content_hash()[:12]})\n"
            f"baseline: {baseline_file} ({baseline.content_hash()[:12]})\nmodel: {model}"
            f"{' (simulated test double)' if model.simulated else ''}\nsplit: {split} of {pack} ({len(ids)} tasks)\n"
            f"release ledger: {ledger.describe()}\n\n"
            + (f"**Not a fresh test.** {REUSE_NOTE}.\n\n" if reused else "")
            + (f"**Same strategy.** {note}\n\n" if same else "")
            + f"```\n{render(result)}\n```\n\n{explain(result, same)}\n\n"
            + "```\n" + "\n".join(render_clusters(clusters)) + "\n```\n")
    finally:
        store.close()
    return GateRun(result, not reused, None, clusters, ledger, same_strategy_note=note if same else None)


def _kata(task: object) -> str | None:
    """The kata a task's metadata names (None: the task, or its metadata, has none)."""
    meta = getattr(task, "meta", None)
    return getattr(getattr(meta, "metadata", None), "kata", None)


def _replayed_clusters(replay: SpentRelease) -> ClusterDiagnostics | None:
    """The diagnostics of a replayed gate, from the outcomes its run folder kept (None: not there)."""
    path = Path(replay.run_dir) / "gate_outcomes.csv"
    try:
        return diagnose_clusters(read_outcomes_csv(path)) if path.is_file() else None
    except UserError:
        return None


def _skipped_report(challenger_file: Path, digest: str, model: ModelRef, split: str, pack: Path, why: str) -> str:
    return (f"# Release gate\n\nchallenger and baseline: {challenger_file} ({digest[:12]}), the same strategy\n"
            f"model: {model}\nsplit: {split} of {pack} (not evaluated, not spent)\n\n"
            f"decision: NOT PROMOTED (the initial strategy stays)\n\n{why}\n")


def next_steps(run_dir: Path) -> str:
    """One line per thing to look at, so that a wrapped line never splits two of them."""
    return "\n".join([
        "Look next:",
        f"  {Path(run_dir) / 'gate_report.md'}: this decision;",
        f"  {Path(run_dir) / 'gate_outcomes.csv'}: each task's two outcomes;",
        f"  `autosaddler view {run_dir} --out {Path(run_dir) / 'search-report.html'}`: the 2x2 table, p and "
        "intervals beside the search that produced the challenger."])


@click.command("gate")
@click.option("--outcomes", "outcomes_csv", type=InputFile(),
              help="CSV with columns task, challenger, baseline (0/1): decide without running anything.")
@click.option("--challenger", type=InputFile(bundled="strategy"), help="Frozen challenger strategy.")
@click.option("--baseline", type=InputFile(bundled="strategy"),
              help="Baseline strategy file, or a bundled one's name (initial).")
@click.option("--pack", type=PackDir(), help="Task pack folder, or a bundled pack's name (katas).")
@click.option("--split", default="release", show_default=True, help="The release split (spent afterwards).")
@click.option("--split-file", type=InputFile(bundled="split file"),
              help="Split file or a bundled one's name (default: splits/<pack>.json).")
@click.option("--model", type=MODEL, help="Execution model for both strategies.")
@click.option("--run", "run_dir", type=NewRunDir(), help="Run folder for the gate.")
@click.option("--preset", type=click.Choice(["paper", "demo"]), default="paper", show_default=True,
              help="Execution settings (TestHelix configuration, caps) shared with the search.")
@click.option("--allow-reuse", is_flag=True, help="Gate on a release split an earlier gate already spent (the "
                                                  "decision is then marked as no longer a fresh test).")
@click.option("--allow-unfrozen-challenger", is_flag=True,
              help="Gate a challenger that is not a frozen strategy file (the release split is spent on a strategy "
                   "with no recorded provenance; a warning says so).")
@mlflow_option
@setup_options()
@json_option
def command(outcomes_csv: Path | None, challenger: Path | None, baseline: Path | None, pack: Path | None, split: str,
            split_file: Path | None, model: ModelRef | None, run_dir: Path | None, preset: str, allow_reuse: bool,
            allow_unfrozen_challenger: bool, options: RunOptions, as_json: bool) -> None:
    """Promote a frozen challenger only on a positive difference with one-sided exact McNemar p <= 0.05."""
    fresh, replay, run = True, None, None
    diagnostics: ClusterDiagnostics | None = None
    if outcomes_csv is not None:
        ignored = [n for n, v in (("--challenger", challenger), ("--baseline", baseline), ("--pack", pack),
                                  ("--model", model), ("--run", run_dir), ("--split-file", split_file)) if v is not None]
        if ignored:
            raise UserError(f"--outcomes decides from recorded outcomes; {', '.join(ignored)} would be ignored "
                            "(give either --outcomes or the options that run both strategies)")
        recorded = read_outcomes_csv(outcomes_csv)
        result, diagnostics = decide(recorded), diagnose_clusters(recorded)
    else:
        missing = [n for n, v in (("--challenger", challenger), ("--baseline", baseline), ("--pack", pack),
                                  ("--model", model), ("--run", run_dir)) if v is None]
        if missing:
            raise UserError(f"give --outcomes FILE.csv, or all of: {', '.join(missing)} (missing)")
        # the check above, spelled so the type checker sees it
        assert challenger is not None and baseline is not None and pack is not None and model is not None \
            and run_dir is not None
        if not is_frozen_strategy_file(challenger):
            if not allow_unfrozen_challenger:
                raise UserError(f"--challenger {challenger}: not a frozen strategy (freeze it with `autosaddler freeze`; "
                                "or pass --allow-unfrozen-challenger to spend the release split on it anyway)")
            click.echo(f"WARNING: --challenger {challenger} is not frozen: this gate spends the release split on a "
                       "strategy with no recorded provenance (--allow-unfrozen-challenger)", err=True)
        run = run_gate(challenger, baseline, pack, split, model, run_dir, split_file, preset, allow_reuse,
                       options, progress=not as_json)
        if run.result is None:
            _say_skipped(run.skipped or "", run_dir, as_json)
            return
        result, fresh, replay = run.result, run.fresh, run.replay_of
        diagnostics = run.diagnostics if run.diagnostics is not None else diagnostics
    if replay is None:   # a replay was tracked when it was decided
        track_gate_command(requested_mlflow_uri(), result, outcomes_csv=outcomes_csv, challenger=challenger,
                           baseline=baseline, pack=pack, split=split, model=model.given if model else None,
                           run_dir=run_dir)  # no-op without URI
    same = replay.challenger_hash == replay.baseline_hash if replay is not None else (
        run is not None and challenger is not None and baseline is not None
        and load_strategy(challenger).content_hash() == load_strategy(baseline).content_hash())
    replay_note = None if replay is None else (
        f"replay: the same challenger and baseline with the same model on the same {result.n} tasks were decided by "
        f"release gate {replay.gate_id} (run {replay.run_dir}); this is that test's recorded decision, not a new "
        "look, and nothing was run")
    ledger_note = None if run is None or run.ledger is None else f"release ledger: {run.ledger.describe()}"
    if as_json:
        print_json(result.to_json() | ({} if fresh else {"fresh_test": False, "note": REUSE_NOTE})
                   | ({} if replay is None else {"replay_of": replay.gate_id, "note": replay_note})
                   | {"why": explain(result, same)}
                   | ({} if diagnostics is None else {"diagnostics": diagnostics.to_json()})
                   | ({} if run is None or run.ledger is None else {"release_ledger": str(run.ledger.root)}))
        return
    width = output_width()  # a log keeps these last lines: 80 columns when stdout is not a terminal
    click.echo("\n".join(clip(line, width) for line in render(result).splitlines()))
    if not fresh:
        click.echo(wrap(f"note: {REUSE_NOTE}", width))
    if replay_note:
        click.echo(wrap(f"note: {replay_note}", width))
    if run is not None and run.same_strategy_note:
        click.echo(wrap(f"note: {run.same_strategy_note}", width))
    click.echo("")
    click.echo(wrap(explain(result, same), width, hang=""))
    if diagnostics is not None:
        click.echo("")
        click.echo(wrap("\n".join(render_clusters(diagnostics)), width, hang="  "))
    if ledger_note:
        click.echo(wrap(ledger_note, width))
    if run_dir is not None:
        click.echo(wrap(next_steps(Path(replay.run_dir) if replay is not None else run_dir), width))


def _say_skipped(why: str, run_dir: Path, as_json: bool) -> None:
    """A same-strategy gate decided without evaluating."""
    if as_json:
        print_json({"promoted": False, "evaluated": False, "why": why})
        return
    width = output_width()
    click.echo("decision: NOT PROMOTED (the initial strategy stays; decided without evaluating)")
    click.echo("")
    click.echo(wrap(f"Why: {why}", width, hang=""))
    click.echo(wrap("A search freezes its root when none of its proposals was screened in; `autosaddler view "
                    f"{run_dir}` shows each proposal, its minibatch and its fate.", width, hang=""))
    click.echo(wrap(f"Look next: {Path(run_dir) / 'gate_report.md'}: this decision.", width))
