"""`testhelix splits`: make and check the split files of a task pack."""

from __future__ import annotations

from pathlib import Path

import click

from testhelix.commands.plumbing import json_option, print_json
from testhelix.core.errors import UserError
from testhelix.core.inputs import SEED, InputFile, OutputFile, PackDir
from testhelix.core.paths import splits_dir
from testhelix.tasks.splits import (
    SPLIT_NAMES,
    check_splits,
    coverage,
    divided_groups,
    load_split_file,
    make_splits,
    write_split_file,
)


@click.group("splits")
def command() -> None:
    """Disjoint proposal / development / release / test splits of a task pack."""


@command.command("make")
@click.option("--pack", "pack_dir", required=True, type=PackDir(), help="Task pack folder, or a bundled pack's name (katas).")
@click.option("--seed", type=SEED, default=42, show_default=True, help="Seed of the assignment.")
@click.option("--proposal", type=click.IntRange(0, 1_000_000), help="Proposal split size (default: 500, or 50% of a small pack).")
@click.option("--development", type=click.IntRange(0, 1_000_000), help="Development split size (default: 100, or 15%).")
@click.option("--release", type=click.IntRange(0, 1_000_000), help="Release split size (default: 100, or 15%).")
@click.option("--test", type=click.IntRange(0, 1_000_000), help="Test split size (default: 300, or 20%).")
@click.option("--group-by", type=click.Choice(["kata"]), help="Keep every task of a group in one split.")
@click.option("--stratify-by", type=click.Choice(["context"]),
              help="Assign per routing context, so that every split holds every context.")
@click.option("--out", type=OutputFile(), help="Output file (default: splits/<pack>.json).")
@json_option
def make(pack_dir: Path, seed: int, proposal: int | None, development: int | None, release: int | None,
         test: int | None, group_by: str | None, stratify_by: str | None, out: Path | None, as_json: bool) -> None:
    """Write a split file for PACK with seed 42 by default."""
    given = {"proposal": proposal, "development": development, "release": release, "test": test}
    sizes: dict[str, int] | None = None
    if any(v is not None for v in given.values()):
        missing = [k for k, v in given.items() if v is None]
        if missing:
            raise UserError(f"give all four sizes or none (missing: {', '.join('--' + m for m in missing)})")
        sizes = {k: v for k, v in given.items() if v is not None}  # every one was given
        if sum(sizes.values()) == 0:
            raise UserError("--proposal, --development, --release, --test: all sizes are 0; a split file needs at least one task")
    split = make_splits(pack_dir, sizes, seed, group_by, stratify_by)
    out = out or splits_dir() / f"{split.pack}.json"
    write_split_file(split, out)
    data = split.to_json()
    if as_json:
        print_json({"file": str(out), "sizes": data["sizes"], "digest": data["digest"]})
    else:
        sizes_text = ", ".join(f"{k} {v}" for k, v in data["sizes"].items())
        click.echo(f"wrote {out}: {sizes_text} (seed {seed}, digest {data['digest'][:12]})")


@command.command("check")
@click.argument("split_file", type=InputFile(bundled="split file"))
@click.option("--pack", "pack_dir", default=None, type=PackDir(),
              help="Task pack folder, or a bundled pack's name (default: the pack the split file names).")
@json_option
def check(split_file: Path, pack_dir: Path | None, as_json: bool) -> None:
    """Refuse overlaps, unknown ids and a pack that changed since the splits were made (and, in a
    file stratified by context, a split without some context); show tasks per context and split."""
    split = load_split_file(split_file)
    if pack_dir is None:
        pack_dir = PackDir().convert(split.pack, None, None)
    problems = check_splits(split, pack_dir)
    contexts = coverage(split, pack_dir)
    divided = divided_groups(split, pack_dir) if split.group_by else {}
    if as_json:
        print_json({"ok": not problems, "sizes": {k: len(v) for k, v in split.splits.items()},
                    "contexts": contexts, "divided_groups": divided,
                    "problems": [{"path": p, "message": m} for p, m in problems]})
        if problems:
            raise SystemExit(2)
        return
    if problems:
        raise UserError(f"{split_file}: {len(problems)} problem(s)", problems)
    names = sorted({c for counts in contexts.values() for c in counts})
    click.echo(f"{'split':<12}{'tasks':>6}  " + "".join(f"{c:>12}" for c in names))
    for name in (k for k in SPLIT_NAMES if k in split.splits):
        click.echo(f"{name:<12}{len(split.splits[name]):>6}  "
                   + "".join(f"{contexts[name].get(c, 0):>12}" for c in names))
    for group, where in divided.items():
        click.echo(f"divided {split.group_by}: {group} (" + ", ".join(f"{k} {v}" for k, v in where.items()) + ")")
    sizes = ", ".join(f"{k} {len(split.splits[k])}" for k in SPLIT_NAMES if k in split.splits)
    every = all(set(names) <= set(c) for n, c in contexts.items() if split.splits[n])
    click.echo(f"ok: {sizes}; disjoint; pack unchanged; "
               + (f"every split holds all {len(names)} contexts" if every else "some split lacks a context"))
