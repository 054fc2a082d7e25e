"""`testhelix strategy`: validate, hash and describe strategy files."""

from __future__ import annotations

from pathlib import Path

import click

from testhelix.commands.plumbing import json_option, print_json
from testhelix.core import atomic
from testhelix.core.errors import UserError
from testhelix.core.inputs import InputFile, OutputFile
from testhelix.helix.config import get_config
from testhelix.strategy.model import (
    FIXED_FIELDS,
    MUTABLE_FIELDS,
    Strategy,
    frozen_envelope_problems,
    read_json,
    run_compatibility_problems,
    schema_json,
    validate_strategy_data,
)


@click.group("strategy")
def command() -> None:
    """Validate and inspect strategy files."""


@command.command("validate")
@click.argument("file", type=InputFile(bundled="strategy"))
@click.option("--config", "config_name", type=click.Choice(list("ABCDE"), case_sensitive=False), default="C",
              show_default=True, help="Run configuration the strategy must fit (C, D, E run differential "
                                      "challenges, which need rounds >= 2; A and B do not).")
@json_option
def validate(file: Path, config_name: str, as_json: bool) -> None:
    """Check FILE against every bound and rule, and against a run configuration; print its content
    hash (exit 2 if invalid)."""
    try:
        data = read_json(file)
    except UserError as err:
        if not as_json:
            raise
        print_json({"valid": False, "hash": None, "errors": [{"path": "$", "message": err.message}]})
        raise SystemExit(2) from None
    frozen = data if isinstance(data, dict) and "strategy" in data and "provenance" in data else None
    if frozen is not None:
        data = frozen["strategy"]
    strategy, problems = validate_strategy_data(data)
    envelope = frozen_envelope_problems(frozen) if frozen is not None else []
    if strategy is not None:
        problems = [*envelope, *run_compatibility_problems(strategy, get_config(config_name).challenge_steps)]
        if frozen is not None and frozen.get("hash") != strategy.content_hash():  # what `export`/`gate` refuse too
            problems.append(("hash", f"the frozen file says {frozen.get('hash')!r} but the strategy hashes to "
                                     f"{strategy.content_hash()!r} (edited after freezing, or no hash)"))
        if problems:
            strategy = None
    else:
        problems = [*envelope, *problems]
    if as_json:
        print_json({"valid": strategy is not None, "hash": strategy.content_hash() if strategy else None,
                    "errors": [{"path": p, "message": m} for p, m in problems]})
    elif strategy is not None:
        click.echo(f"valid  {strategy.content_hash()}")
    else:
        click.echo(f"invalid: {len(problems)} problem(s) in {file} (checked for configuration {config_name.upper()})",
                   err=True)
        for path, message in problems:
            click.echo(f"  {path}: {message}", err=True)
    if strategy is None:
        raise SystemExit(2)


@command.command("schema")
@click.option("--out", type=OutputFile(), help="Write the schema here instead of printing it.")
def schema(out: Path | None) -> None:
    """Print (or write) the JSON Schema generated from the strategy model."""
    text = schema_json()
    if out:
        atomic.write_text(out, text)
    else:
        click.echo(text, nl=False)


@command.command("fields")
@json_option
def fields(as_json: bool) -> None:
    """List the strategy fields, their defaults and whether a search may edit them."""
    defaults = Strategy().model_dump(mode="json")
    rows = [{"field": name, "default": defaults[name], "mutable": name in MUTABLE_FIELDS}
            for name in Strategy.model_fields]
    if as_json:
        print_json(rows)
        return
    for r in rows:
        click.echo(f"{r['field']:<20} {'mutable' if r['mutable'] else 'fixed':<8} {r['default']!r}")
    click.echo(f"{len(MUTABLE_FIELDS)} mutable, {len(FIXED_FIELDS)} fixed")
