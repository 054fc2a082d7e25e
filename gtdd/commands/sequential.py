"""`gtdd supermartingale` and `gtdd e-process`: the sequential audits of seed Section 4.5 (gtdd.stats.sequential).

supermartingale: one committed candidate's audit inspected case by case; W_r = I_r / q_{N,rho}(r),
  and by Ville's inequality a candidate above tolerance ever reaches 1/epsilon with probability at
  most epsilon. This is what `gtdd experiment --acceptance-rule sequential` runs per family.
e-process: audits of DIFFERENT candidates multiplied, Z_t = prod A_s / q_s; crossing 1/alpha rejects
  only "every candidate was above tolerance" and can happen while the current candidate is bad
  (the seed's 786.92 -> 828.34 example), so it is not an acceptance rule for one candidate.
"""

from __future__ import annotations

import math
from fractions import Fraction

import click

from gtdd.commands.labels import emit
from gtdd.commands.stats import EXACT_SAMPLE_LIMIT, POPULATION
from gtdd.stats import params
from gtdd.stats.acceptance import exact_false_acceptance_bound
from gtdd.stats.sequential import CandidateSequenceEProcess, CandidateSupermartingale
from testhelix.commands.plumbing import json_option
from testhelix.core.errors import UserError

MAX_DRAWS = 1_000_000  # draws one supermartingale command follows (one exact step each)


def _draws(text: str) -> list[bool]:
    """'PPPF' or '60P,1F': P a passing draw, F a failing one; returns failed flags."""
    out: list[bool] = []
    for part in (p.strip() for p in text.replace(" ", "").split(",") if p.strip()):
        count, kind = (part[:-1], part[-1].upper()) if len(part) > 1 and part[:-1].isdigit() else ("", None)
        if kind in ("P", "F"):
            if len(count) > 7 or len(out) + int(count) > MAX_DRAWS:
                raise UserError(f"--draws {text[:60]!r}: more than {MAX_DRAWS} draws (the limit of this calculator; "
                                "a longer audit has long crossed any threshold)")
            out += [kind == "F"] * int(count)
        elif set(part.upper()) <= {"P", "F"}:
            out += [c == "F" for c in part.upper()]
            if len(out) > MAX_DRAWS:
                raise UserError(f"--draws: more than {MAX_DRAWS} draws (the limit of this calculator)")
        else:
            raise UserError(f"--draws {text!r}: expected P/F letters or counts like 60P,1F (at {part!r})")
    if not out:
        raise UserError("--draws: no draws given")
    return out


def _value(x: float) -> float | str:
    return "inf" if math.isinf(x) else round(x, 6)


@click.command("supermartingale")
@click.option("--population", "-N", type=POPULATION, required=True, help="Population size N of the family.")
@click.option("--tolerance", "rho", required=True, help="Tolerance rho in (0, 1).")
@click.option("--epsilon", required=True, help="This candidate's error allocation epsilon (threshold 1/epsilon).")
@click.option("--draws", required=True, help="Audit draws in order: P pass, F fail (PPPF, or 60P,1F).")
@json_option
def supermartingale_command(population: int, rho: str, epsilon: str, draws: str, as_json: bool) -> None:
    """One candidate's sequential audit: W_r after each draw and whether it reaches 1/epsilon."""
    martingale = CandidateSupermartingale(population, rho, epsilon)
    flags = _draws(draws)
    if len(flags) > population:
        raise UserError(f"--draws: {len(flags)} draws from a population of {population}")
    path = []
    for failed in flags:
        martingale.observe(failed)
        path.append(_value(martingale.value))
    result = {"draws": len(flags), "W": path[-1], "threshold": float(1 / params.open_unit(epsilon, "epsilon")),
              "crossed_at": martingale.crossed_at, "endpoint": martingale.endpoint,
              "within_tolerance_proven": martingale.within_tolerance_proven,
              "decision": "accept" if martingale.crossed else ("reject" if martingale.failed else "continue"),
              "guarantee": "a candidate above tolerance reaches the threshold with probability <= epsilon (Ville)"}
    emit({**result, "path": path} if as_json else result, as_json)


@click.command("e-process")
@click.option("--alpha", required=True, help="Error target alpha (threshold 1/alpha), e.g. 1/800.")
@click.option("--tolerance", "rho", required=True, help="Tolerance rho in (0, 1).")
@click.option("--population", "-N", type=POPULATION, default=None,
              help="Population size N: factors use the exact q_{N,rho}(n). Without it, the conservative (1 - rho)^n.")
@click.option("--audit", "audits", multiple=True, required=True,
              help="One candidate's audit, in order: SIZE:pass or SIZE:fail (repeatable).")
@json_option
def e_process_command(alpha: str, rho: str, population: int | None, audits: tuple[str, ...], as_json: bool) -> None:
    """Evidence across candidates: Z_t = prod A_s / q(n_s). Crossing rejects 'every candidate was bad',
    which does NOT certify the current candidate."""
    process = CandidateSequenceEProcess(alpha)
    tolerance = params.open_unit(rho, "tolerance")
    values = []
    for text in audits:
        size, _, outcome = text.partition(":")
        if not size.isdigit() or int(size) < 1 or outcome not in ("pass", "fail"):
            raise UserError(f"--audit {text!r}: expected SIZE:pass or SIZE:fail with SIZE >= 1")
        if len(size) > 7 or int(size) > EXACT_SAMPLE_LIMIT:
            raise UserError(f"--audit {text[:40]!r}: an audit of more than {EXACT_SAMPLE_LIMIT} cases is above this "
                            "calculator's limit (its factor is an exact fraction with digits growing with the size)")
        n = int(size)
        if population is not None:
            if n > population:
                raise UserError(f"--audit {text!r}: a sample of {n} from a population of {population}")
            bound: Fraction = exact_false_acceptance_bound(population, tolerance, n)
            if bound == 0:
                raise UserError(f"--audit {text!r}: q_N,rho({n}) = 0, so this audit proves the candidate "
                                "within tolerance by itself; the e-process factor is undefined")
        else:
            bound = (1 - tolerance) ** n
        process.observe(outcome == "pass", bound)
        values.append(round(process.value, 6))
    result = {"audits": len(values), "Z": values, "threshold": float(1 / params.open_unit(alpha, "alpha")),
              "crossed_at": process.crossed_at,
              "factors": "exact q_N,rho(n)" if population is not None else "conservative (1 - rho)^n",
              "caveat": "crossing rejects only that every audited candidate was above tolerance; the "
                        "evidence may come from earlier candidates, so it does not accept the current one"}
    emit(result, as_json)


COMMANDS = (supermartingale_command, e_process_command)
