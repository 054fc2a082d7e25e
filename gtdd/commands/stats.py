"""`gtdd` commands for the exact audit statistics (audit sizes, acceptance, history, probing)."""

from __future__ import annotations

from pathlib import Path

import click

from gtdd.commands.labels import emit
from gtdd.stats import params
from gtdd.stats.acceptance import acceptance_probability
from gtdd.stats.audit import audit_size
from gtdd.stats.history import history_bound
from gtdd.stats.params import Method
from gtdd.stats.probing import probe_success
from gtdd.stats.recorded import recorded_audit
from gtdd.stats.tables import render, seed_tables
from testhelix.commands.plumbing import json_option, print_json
from testhelix.core.errors import UserError
from testhelix.core.inputs import InputFile

# Documented ranges of the whole numbers every calculator takes (shown in --help); a population
# beyond 10**15 cases has no use in an audit and makes the exact sums' integers needlessly long.
POPULATION = click.IntRange(1, 10**15)
COUNT = click.IntRange(0, 10**15)
# Probabilities are read as text so "0.05" stays exactly 1/20 (see gtdd.stats.params).
population_opt = click.option(
    "--population", "-N", type=POPULATION, required=True, help="Population size N."
)
tolerance_opt = click.option("--tolerance", "rho", required=True, help="Tolerance rho in (0, 1).")
alpha_opt = click.option("--alpha", required=True, help="Error target alpha in (0, 1).")
allowed_opt = click.option(
    "--failures-allowed", "failures_allowed", type=COUNT, default=0, show_default=True,
    help="Accept when the audit sample holds at most this many failures.",
)
method_opt = click.option(
    "--method", type=click.Choice(params.METHODS), default="auto", show_default=True,
    help="exact big integers, log space, or auto (exact for small populations).",
)


# Documented limits of the exact computations (README: "Limits of the exact statistics"). Their cost
# grows with the sizes below (big-integer sums over n terms, over T x k message histories, over T x m
# probe occupancies); above the limits one answer takes minutes to hours, so they are refused with the
# reason instead of running without bound. `--method auto` switches to log space for large populations.
EXACT_SAMPLE_LIMIT = 100_000          # audit size n for --method exact
HISTORY_WORK_LIMIT = 10_000           # rounds T x max(1, report limit k) for history-bound
PROBE_WORK_LIMIT = 20_000             # (rounds T - 1) x region m for probe


def _check_exact(method: str, sample: int | None) -> None:
    if method == "exact" and sample is not None and sample > EXACT_SAMPLE_LIMIT:
        raise UserError(f"--method exact with --sample {sample}: above the exact method's limit of "
                        f"{EXACT_SAMPLE_LIMIT} (the big-integer sum grows with n); use --method log or auto")


@click.command("audit-size")
@population_opt
@tolerance_opt
@alpha_opt
@click.option("--opportunities", "-M", type=click.IntRange(1, 10**15), default=1, show_default=True,
              help="Audits sharing alpha (e.g. M T or M T J); each gets alpha / opportunities.")
@allowed_opt
@method_opt
@json_option
def audit_size_command(population: int, rho: str, alpha: str, opportunities: int, failures_allowed: int, method: Method,
                       as_json: bool) -> None:
    """Smallest exact audit size and exponential sufficient size for an error target.

    q is q^{(c)}_{N,rho}(exact_n); exponential_n is null when failures are allowed."""
    a = params.open_unit(alpha, "alpha")
    params.count(opportunities, "opportunities", 1)
    size = audit_size(population, rho, a / opportunities, failures_allowed, method)
    emit({"exact_n": size.exact_n, "exponential_n": size.exponential_n, "q": size.q}, as_json)


@click.command("accept-prob")
@population_opt
@click.option("--failures", "-K", type=COUNT, required=True, help="Failing cases K among N.")
@click.option("--sample", "-n", type=click.IntRange(1, 10**15), required=True, help="Audit size n.")
@allowed_opt
@method_opt
@json_option
def accept_prob_command(population: int, failures: int, sample: int, failures_allowed: int, method: Method,
                        as_json: bool) -> None:
    """Probability that a fixed candidate with K failures passes a size-n audit."""
    _check_exact(method, sample)
    p = acceptance_probability(population, failures, sample, failures_allowed, method)
    emit({"probability": p}, as_json)


@click.command("history-bound")
@population_opt
@tolerance_opt
@alpha_opt
@click.option("--rounds", "-T", type=click.IntRange(1, 10**6), required=True, help="Rounds T of feedback.")
@click.option("--report-limit", "-k", "report_limit", type=COUNT, required=True,
              help="At most k reported cases per round.")
@click.option("--no-accept-bit", is_flag=True, help="The acceptance decision is not observed.")
@json_option
def history_bound_command(population: int, rho: str, alpha: str, rounds: int, report_limit: int, no_accept_bit: bool,
                          as_json: bool) -> None:
    """Hidden-test-set size under repeated feedback: exact (eq. 13) and exponential (eq. 14)."""
    if rounds is not None and report_limit is not None and rounds * max(1, report_limit) > HISTORY_WORK_LIMIT:
        raise UserError(f"--rounds {rounds} x --report-limit {report_limit}: above the documented limit of "
                        f"{HISTORY_WORK_LIMIT} (the exact history count has T x k x log N digits)")
    bound = history_bound(population, rho, alpha, rounds, report_limit, not no_accept_bit)
    emit({"exact_n": bound.exact_n, "exponential_n": bound.exponential_n}, as_json)


@click.command("probe")
@population_opt
@click.option("--sample", "-n", type=click.IntRange(1, 10**15), required=True, help="Hidden test-set size n.")
@click.option("--region", "-m", type=click.IntRange(1, 10**15), required=True, help="Cases m in each probe region.")
@click.option("--report-limit", "-k", "report_limit", type=COUNT, required=True,
              help="At most k reported cases per round.")
@click.option("--rounds", "-T", type=click.IntRange(1, 10**6), required=True, help="Rounds T (T - 1 probe regions).")
@tolerance_opt
@json_option
def probe_command(population: int, sample: int, region: int, report_limit: int, rounds: int, rho: str,
                  as_json: bool) -> None:
    """Success of the probing construction: union lower bound (Thm 4.6) and exact (eq. 23).

    The union lower bound is 0 when r (m - k) <= rho N, where Theorem 4.6 does not apply."""
    if rounds is not None and region is not None and (rounds - 1) * region > PROBE_WORK_LIMIT:
        raise UserError(f"--rounds {rounds} x --region {region}: above the documented limit of {PROBE_WORK_LIMIT} "
                        "(the exact occupancy sum grows with (T - 1) x m)")
    r = probe_success(population, sample, region, report_limit, rounds, rho)
    emit({"union_lower_bound": r.union_lower_bound, "exact_success": r.exact_success}, as_json)


@click.command("tables")
@json_option
def tables_command(as_json: bool) -> None:
    """Print the GTDD paper's Tables 1-4, recomputed."""
    tables = seed_tables()
    if as_json:
        print_json([t.as_dict() for t in tables])
    else:
        click.echo(render(tables))


def _read_counts(path: Path) -> list[list[int]]:
    from testhelix.core.readers import read_json

    data = read_json(path)
    if isinstance(data, dict):
        data = data.get("trajectories")
    if not isinstance(data, list) or not all(isinstance(t, list) for t in data):
        raise UserError(f"{path}: expected a list of trajectories, each a list of failure counts")
    return data


@click.command("recorded-audit")
@click.option("--counts", type=InputFile(), required=True,
              help='JSON: [[K, ...], ...] or {"trajectories": [...]}, failure counts per round.')
@population_opt
@tolerance_opt
@click.option("--sample", "-n", type=click.IntRange(1, 10**15), help="Audit size n, at least 1 (or give --alpha).")
@click.option("--alpha", help="Error target; sizes the audit as alpha / opportunities.")
@click.option("--opportunities", "-M", type=click.IntRange(1, 10**15), default=1, show_default=True)
@allowed_opt
@json_option
def recorded_audit_command(counts: Path, population: int, rho: str, sample: int | None, alpha: str | None,
                           opportunities: int, failures_allowed: int, as_json: bool) -> None:
    """Expected outcomes of an audit rule on recorded trajectories, stopping at first acceptance."""
    if (sample is None) == (alpha is None):
        raise UserError("give exactly one of --sample and --alpha")
    if sample is None:
        params.count(opportunities, "opportunities", 1)
        assert alpha is not None  # exactly one of --sample and --alpha was given
        eps = params.open_unit(alpha, "alpha") / opportunities
        sample = audit_size(population, rho, eps, failures_allowed).exact_n
    result = recorded_audit(_read_counts(counts), population, rho, sample, failures_allowed)
    emit(
        {
            "sample": sample,
            "expected_false_acceptances": result.expected_false_acceptances,
            "expected_tolerable_acceptances": result.expected_tolerable_acceptances,
            "mean_no_acceptance": result.mean_no_acceptance,
        },
        as_json,
    )


COMMANDS = [
    audit_size_command,
    accept_prob_command,
    history_bound_command,
    probe_command,
    tables_command,
    recorded_audit_command,
]
