"""`testhelix pack build` / `testhelix pack verify`: build the kata task pack and re-check it."""

from __future__ import annotations

import time
from pathlib import Path

import click

from testhelix.cliutil import execution_options, json_option, print_json
from testhelix.inputs import InputDir
from testhelix.paths import tasks_dir


@click.group("pack")
def command() -> None:
    """Build a task pack from hand-written katas and verify a built pack."""


@command.command("build")
@click.option("--src", type=InputDir(), default=None,
              help="Kata source folder (default: tasks/katas-src).")
@click.option("--out", type=click.Path(path_type=Path), default=None, help="Pack folder to write (default: tasks/katas).")
@click.option("--seed", type=int, default=42, show_default=True, help="Seed for the panel tie-breaks.")
@click.option("--workers", type=click.IntRange(1, 64), default=2, show_default=True, help="Parallel test processes.")
@click.option("--kata", "katas", multiple=True, help="Build only this kata (repeatable).")
@json_option
def build(src: Path | None, out: Path | None, seed: int, workers: int, katas: tuple[str, ...], as_json: bool) -> None:
    """Write one task per kata defect, with confirmed labels, panels and simulation banks."""
    from testhelix.pack.build import build_pack

    start = time.monotonic()
    # Progress goes to stderr so that --json leaves stdout to the result.
    report = build_pack(src or tasks_dir() / "katas-src", out or tasks_dir() / "katas", seed, workers, katas,
                        log=lambda line: click.echo(line, err=True))
    wall = time.monotonic() - start
    result = {"tasks": len(report.tasks), "contexts": report.contexts, "runs": report.runs,
              "dropped": [{"task": t, "reason": r} for t, r in report.dropped], "wall_s": round(wall, 1)}
    if as_json:
        print_json(result)
        return
    click.echo(f"built {len(report.tasks)} tasks ({report.runs} test runs, {wall:.1f} s); dropped {len(report.dropped)}")
    for context, n in report.contexts.items():
        click.echo(f"  {context:12s} {n}")
    for task, reason in report.dropped:
        click.echo(f"  dropped {task}: {reason}")


@command.command("verify")
@click.argument("pack", type=InputDir())
@click.option("--workers", type=click.IntRange(1, 64), default=2, show_default=True, help="Parallel test processes.")
@click.option("--runner", type=click.Choice(["auto", "executor", "subprocess"]), default="auto", show_default=True,
              help="auto: the harness executor when installed, else plain pytest subprocesses.")
@execution_options
@json_option
def verify(pack: Path, workers: int, runner: str, as_json: bool) -> None:
    """Check digests and labels of every task in PACK; exit 1 if anything fails."""
    from testhelix.pack.verify import verify_pack

    report = verify_pack(pack, workers, runner, log=lambda line: click.echo(line, err=True))
    if as_json:
        print_json(report.to_json())
    else:
        click.echo(f"{report.tasks} tasks, {report.runs} distinct runs, {report.wall_s:.1f} s ({report.runner})")
        for context, n in report.contexts.items():
            click.echo(f"  {context:12s} {n}")
        for task, problem in report.failures:
            click.echo(f"FAIL {task}: {problem}")
        click.echo("OK" if report.ok else f"{len(report.failures)} failure(s)")
    if not report.ok:
        raise click.exceptions.Exit(1)
