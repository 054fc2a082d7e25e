"""`gtdd plugin check NAME`: does a GTDD domain plug-in conform, and does its reference pass its own checks."""

from __future__ import annotations

import sys

import click


@click.group("plugin")
def command() -> None:
    """Check GTDD domain plug-ins the way `--domain` loads them."""


@command.command("check")
@click.argument("name")
@click.option("--sandbox", "sandbox", default=None, metavar="SANDBOX",
              help="run the reference's traces in this sandbox (a name, package.module:OBJECT or an entry point; "
                   "default: the one the machine supports): how a sandbox plug-in is checked on GTDD's path")
def check_command(name: str, sandbox: str | None) -> None:
    """Load NAME (a built-in domain, package.module:OBJECT or a gtdd.domains entry point), check its
    hooks against the Domain Protocol and run its reference through its own checks; one line per
    check, exit 0 when all passed, 1 when one failed, 2 when NAME (or SANDBOX) does not load."""
    from gtdd.plugin_check import check_domain
    from testhelix.conformance.plugin_check import CheckReport

    report = CheckReport(click.echo)
    check_domain(name, report, sandbox=sandbox)
    click.echo(f"domain {name}: {'FAILED' if report.failed else 'conforms'}")
    sys.exit(1 if report.failed else 0)
