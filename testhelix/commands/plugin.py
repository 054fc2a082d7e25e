"""`testhelix plugin check KIND NAME`: does a plug-in conform, and does it work (conformance/plugin_check.py)."""

from __future__ import annotations

import sys

import click

from testhelix.conformance.plugin_check import KINDS, CheckReport


@click.group("plugin")
def command() -> None:
    """Check plug-ins (model providers, executors, sandboxes, simulated roles) the way their registries load them."""


@command.command("check")
@click.argument("kind", type=click.Choice(sorted(KINDS)), metavar="KIND")
@click.argument("name")
@click.option("--model", help="provider only: a model of it to resolve and send one short request "
                              "(a hosted model is billed for it)")
def check_command(kind: str, name: str, model: str | None) -> None:
    """Load NAME (a built-in name, package.module:OBJECT or an entry point) as a KIND plug-in, check
    its members against the Protocol and exercise it; one line per check, exit 0 when all passed,
    1 when one failed, 2 when NAME does not load. GTDD domains: `gtdd plugin check NAME`."""
    if model is not None and kind != "provider":
        raise click.UsageError("--model is for providers only")
    report = CheckReport(click.echo)
    if kind == "provider":
        KINDS[kind](name, model, report)
    else:
        KINDS[kind](name, report)
    click.echo(f"{kind} {name}: {'FAILED' if report.failed else 'conforms'}")
    sys.exit(1 if report.failed else 0)
