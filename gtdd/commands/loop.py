"""`gtdd experiment`, `gtdd report` and `gtdd run`: the GTDD loop from the command line."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

import click

from gtdd.acceptance import ALLOCATIONS
from gtdd.agents import ROUND_TOKEN_CAP
from gtdd.experiment import FIXED_TESTS, PRESETS, ExperimentSummary
from gtdd.feedback import RULES
from gtdd.policies import POLICIES, parse_policies
from gtdd.rules import RULE_NAMES
from testhelix.commands.plumbing import json_option, print_json
from testhelix.commands.run_options import JOBS_RANGE, RunOptions, setup_options
from testhelix.core.errors import UserError
from testhelix.core.inputs import SEED, FiniteFloat, NewRunDir, RunDir

CommandFunction = TypeVar("CommandFunction", bound=Callable[..., Any])

run_dir_opt = click.option("--run", "run_dir", type=NewRunDir(),
                           required=True, help="Run directory (created; an existing one is resumed).")


def _common(f: CommandFunction) -> CommandFunction:
    options = [
        click.option("--rounds", type=click.IntRange(1, 1000), default=4, show_default=True,
                     help="Coding rounds T per trajectory."),
        click.option("--coder", default="sim:strong", show_default=True,
                     help="Coder model: sim:strong, sim:weak, anthropic:..., openai:..., openai-compatible:..."),
        click.option("--tester", default="sim:strong", show_default=True, help="Tester model (same names)."),
        click.option("--domain", default="kvstore", show_default=True,
                     help="GTDD domain: a built-in name, package.module:OBJECT, or a gtdd.domains entry point."),
        click.option("-k", "--report-limit", "k", type=click.IntRange(0, 10_000), default=6, show_default=True,
                     help="At most k counterexamples reported per round."),
        click.option("--rule", type=click.Choice(sorted(RULES)), default="standard", show_default=True,
                     help="Feedback rule."),
        click.option("--seed", type=SEED, default=0, show_default=True, help="Experiment seed."),
        click.option("--allocation", type=click.Choice(ALLOCATIONS), default="repository", show_default=True,
                     help="Error allocation of the family audits."),
        click.option("--alpha", default="0.05", show_default=True, help="Error target alpha."),
        click.option("--tolerance", default="0.05", show_default=True, help="Family tolerance rho."),
        click.option("--failures-allowed", type=click.IntRange(0, 1_000_000), default=0, show_default=True,
                     help="An audit accepts with at most this many failures."),
        click.option("--no-regression-gate", is_flag=True, help="Acceptance does not require regression tests."),
        click.option("--acceptance-rule", type=click.Choice(RULE_NAMES), default="audit", show_default=True,
                     help="The rule that acts in the loop (docs/gtdd.md): audit, sequential (supermartingale), "
                          "regression-only, public-screening, or none (no gate, the coder sees no decision). "
                          "`gtdd report` applies every rule to the recorded candidates."),
        click.option("--stop-at-first-acceptance", is_flag=True,
                     help="A trajectory ends at its first accepted candidate."),
        click.option("--fixed-tests", type=click.Choice(FIXED_TESTS), default="hidden", show_default=True,
                     help="visible: the coder also sees every saved test it fails (expected and observed)."),
        click.option("--family-tolerance", "family_tolerances", multiple=True, metavar="FAMILY=RHO",
                     help="Tolerance of one requirement family (repeatable); the others use --tolerance."),
        click.option("--public-examples", type=click.IntRange(1, 100), default=2, show_default=True,
                     help="Public examples the coder sees (the domain's own first)."),
        click.option("--preset", type=click.Choice(sorted(PRESETS)), default=None,
                     help="Settings of a published experiment; options you give explicitly still win "
                          "(docs/gtdd.md lists what still differs)."),
        # At least 10 ms: a smaller interval timer is rounded up to the kernel's tick without a word.
        click.option("--per-trace-timeout", type=FiniteFloat(0.01, 3600), default=1.0, show_default=True,
                     help="CPU seconds per trace execution, 0.01 to 3600 (a limit hit is confirmed under "
                          "4x the limits; a wall-clock backstop only yields harness errors)."),
        click.option("--round-token-cap", type=click.IntRange(1000, 10_000_000), default=ROUND_TOKEN_CAP,
                     show_default=True, help="Tokens a model-driven coder or tester may spend in one round "
                                             "(its request's prompt bound plus output)."),
        click.option("--quiet", is_flag=True, help="No progress lines."),
        run_dir_opt,
    ]
    # the model options every command shares, and the sandbox every trace runs in (testhelix/commands/run_options.py)
    f = setup_options(sandbox_only=True, jobs=False, workers=False, backend=False)(f)
    for option in reversed(options):
        f = option(f)
    return f


def _family_tolerances(items: Iterable[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        family, sep, rho = item.partition("=")
        if not sep or not family.strip() or not rho.strip():
            raise UserError(f"--family-tolerance {item!r}: expected FAMILY=RHO, e.g. strings=0.1")
        if family.strip() in out:
            raise UserError(f"--family-tolerance: family {family.strip()!r} is given twice")
        out[family.strip()] = rho.strip()
    return out


def _apply_preset(kw: dict) -> dict:
    """Preset values replace options left at their defaults; explicit options win."""
    preset = kw.pop("preset", None)
    if preset is None:
        return kw
    ctx = click.get_current_context()
    for name, value in PRESETS[preset].items():
        source = ctx.get_parameter_source(name)
        if source is None or source == click.core.ParameterSource.DEFAULT:
            kw[name] = value
    return kw


def _experiment(run_dir: Path, policies: str, blocks: int, rounds: int, coder: str, tester: str, domain: str,
                k: int, rule: str, seed: int, allocation: str, alpha: str, tolerance: str, failures_allowed: int,
                no_regression_gate: bool, per_trace_timeout: float, quiet: bool, jobs: int = 1,
                acceptance_rule: str = "audit", stop_at_first_acceptance: bool = False,
                fixed_tests: str = "hidden", family_tolerances: Iterable[str] = (),
                public_examples: int = 2, round_token_cap: int = ROUND_TOKEN_CAP,
                options: RunOptions | None = None) -> ExperimentSummary:
    from gtdd.experiment import Experiment, ExperimentConfig

    if per_trace_timeout <= 0:
        raise UserError(f"--per-trace-timeout must be positive, got {per_trace_timeout}")
    acceptance = {"allocation": allocation, "alpha": alpha, "tolerance": tolerance,
                  "failures_allowed": failures_allowed, "require_regression": not no_regression_gate,
                  "rule": acceptance_rule, "family_tolerances": _family_tolerances(family_tolerances)}
    config = ExperimentConfig(policies=tuple(p.name for p in parse_policies(policies)), blocks=blocks,
                              rounds=rounds, coder=coder, tester=tester, domain=domain, k=k, rule=rule,
                              seed=seed, per_trace_timeout_s=per_trace_timeout, acceptance=acceptance,
                              jobs=jobs, stop_at_first_acceptance=stop_at_first_acceptance,
                              fixed_tests=fixed_tests, public_examples=public_examples,
                              round_token_cap=round_token_cap)
    echo = (lambda line: None) if quiet else (lambda line: click.echo(line, err=True))
    options = options or RunOptions()
    experiment = Experiment(run_dir, config, progress=echo, sandbox=options.sandbox_choice(),
                            models=options.models([coder, tester]))
    try:
        summary = experiment.run()
    finally:
        experiment.store.close()
    if summary["simulated"] and not quiet:
        click.echo("note: simulated coder/tester (test doubles, not language models)", err=True)
    return summary


@click.command("experiment")
@click.option("--policies", default=None,
              help=f"Comma-separated policies: {', '.join(POLICIES)} (required unless a --preset names them).")
@click.option("--blocks", type=click.IntRange(1, 10_000), default=30, show_default=True, help="Paired blocks.")
@click.option("--jobs", type=JOBS_RANGE, default=1, show_default=True,
              help="Blocks in flight at once, as --jobs is tasks in flight elsewhere (results are the same for "
                   "every value).")
@_common
@json_option
def experiment_command(policies: str | None, blocks: int, jobs: int, as_json: bool, **kw: Any) -> None:
    """Run, resume or extend a paired GTDD experiment: every policy from each block's shared first module.

    The same command resumes a run exactly. More --blocks or --policies extend it: the audits' error
    allocation is recomputed for the new number of trajectories and the recorded rounds are re-audited.
    A different --rounds, acceptance setting or execution configuration is refused (use a new --run)."""
    settings = _apply_preset({"policies": policies, "blocks": blocks, "jobs": jobs, **kw})
    if settings["policies"] is None:
        raise UserError("--policies is required (or a --preset that names them)")
    summary = _experiment(**settings)
    if as_json:
        print_json(summary)
    else:
        click.echo(f"{summary['rounds_run']} rounds run, {summary['trajectories']} trajectories complete, "
                   f"{summary['reaudited']} recorded rounds re-audited, {summary['wall_s']} s; "
                   f"`gtdd report {kw['run_dir']}` prints the results")


@click.command("run")
@click.option("--policy", required=True, type=click.Choice(list(POLICIES)), help="Tester policy.")
@_common
@json_option
def run_command(policy: str, as_json: bool, **kw: Any) -> None:
    """Run one GTDD trajectory and print it round by round."""
    from gtdd.store import rounds
    from testhelix.store.runstore import RunStore

    _experiment(**{**_apply_preset(dict(kw)), "policies": policy, "blocks": 1})
    store = RunStore(kw["run_dir"], read_only=True)
    try:
        rows = rounds(store, block=0, policy=policy)
    finally:
        store.close()
    shown = ("round", "manifest_hash", "proposed", "valid", "failures", "counterexamples", "public_pass",
             "regression_pass", "audits_pass", "accepted", "failure_rate", "simulated")
    records = [{k: getattr(r, k) for k in shown} for r in rows]
    if as_json:
        print_json(records)
        return
    if records and records[0]["simulated"]:
        click.echo("(simulated coder/tester: test doubles, not language models; the simulated coder edits a "
                   "copy of the reference and decides from feedback and its own runs only)")
    for r in records:
        click.echo(f"round {r['round']}  commit {r['manifest_hash'][:12]}  proposed {r['proposed']:>4}  "
                   f"valid {r['valid']:>4}  failing {r['failures']:>4}  reported {r['counterexamples']}  "
                   f"public {'pass' if r['public_pass'] else 'FAIL'}  "
                   f"{'no gate' if r['accepted'] is None else 'accepted' if r['accepted'] else 'rejected'}  "
                   f"population failure rate "
                   f"{r['failure_rate']:.3f}")


@click.command("report")
@click.argument("run_dir", type=RunDir())
@json_option
def report_command(run_dir: Path, as_json: bool) -> None:
    """Failure table, paired contrasts, recorded-candidate audits and a PNG plot of a run."""
    from gtdd.report import write_report

    report, text = write_report(run_dir)
    if as_json:
        print_json(report)
    else:
        click.echo(text)
        click.echo(f"\nplot: {report['plot']}\nreport: {Path(run_dir) / 'report.md'}")


COMMANDS = (experiment_command, run_command, report_command)
