"""`testhelix serve`: a model behind the OpenAI and Anthropic wire protocols on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

import click

from testhelix.commands.run_options import MODEL
from testhelix.core.bundled_data import bundled_pack
from testhelix.core.inputs import SEED, PackDir
from testhelix.llm.modelref import ModelRef


@click.command("serve")
@click.option("--model", "model", required=True, type=MODEL, help="Any model name, e.g. sim:weak.")
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="Port on 127.0.0.1 (0: any free port, printed at start).")
@click.option("--pack", "pack_dir", type=PackDir(),
              help="Task pack a simulated model plays (default: the bundled katas pack).")
@click.option("--seed", type=SEED, default=42, show_default=True, help="Seed of a simulated model.")
@click.option("--fault", "faults", multiple=True,
              help="Scripted fault, in order (repeatable): KIND[:key=value,...], e.g. 429:retry_after=1,times=3.")
@click.option("--api-key", help="Require this key (Authorization: Bearer or x-api-key); others get 401.")
def command(model: ModelRef, port: int, pack_dir: Path | None, seed: int, faults: tuple[str, ...],
            api_key: str | None) -> None:
    """Serve MODEL over OpenAI Chat Completions, OpenAI Responses and Anthropic Messages (loopback only)."""
    from testhelix.llm.serve.faults import parse_fault
    from testhelix.llm.serve.server import ModelServer
    from testhelix.tasks.task import load_pack

    info = model.info
    scripted = [parse_fault(f) for f in faults]   # bad input is refused before any slow step
    tasks = []
    if model.simulated:  # a test double plays the pack's tasks
        folder = pack_dir or bundled_pack("katas", log=lambda line: click.echo(line, err=True))
        click.echo(f"loading the tasks of {folder} for the simulated model (the first time takes a while)...",
                   err=True)   # a slow first step says what it is doing
        tasks = load_pack(folder)
    server = ModelServer(model, tasks=tasks, port=port, seed=seed, faults=scripted,
                         api_key=api_key)
    click.echo(f"serving {model} on {server.url} ({len(tasks)} tasks)")
    click.echo(f"  OpenAI-compatible: --model openai-compatible:{info.model}@{server.url}/v1")
    click.echo(f"  Anthropic SDK:     ANTHROPIC_BASE_URL={server.url}")
    click.echo(f"  OpenAI SDK:        OPENAI_BASE_URL={server.url}/v1")
    if model.simulated:
        click.echo(f"note: {info.name} is a simulated test double, not a real model")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
