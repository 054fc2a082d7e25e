"""The options a simulated model's name may carry: `sim:NAME?latency=S&noise=P&seed=N`.

- `latency=SECONDS` (0-600): each answer waits about that long (latency.py); answers unchanged.
- `seed=N` (an integer, default 0): which simulated agent this is. Without noise, a simulated model
  is one fixed deterministic agent per `seed` (draws.py: common random numbers).
- `noise=P` (0-1, default 0): sampling noise. Each decision is, with probability P, re-drawn from
  the evaluation's own sampling stream instead of the common one, so two evaluations (two run
  labels: two strategies, two gate arms) differ like two samples of a stochastic model. With
  `noise=1` every decision is an independent sample per evaluation.

All three are options of the model string, so they are recorded wherever the model name is.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import parse_qs

from testhelix.core.errors import UserError

KNOWN = ("latency", "noise", "seed")


@dataclass(frozen=True)
class SimOptions:
    latency: float = 0.0
    noise: float = 0.0
    seed: int = 0


def parse_sim_name(name: str) -> tuple[str, SimOptions]:
    """`sim:weak?noise=0.1&seed=3` -> ("sim:weak", SimOptions(noise=0.1, seed=3))."""
    base, sep, query = name.partition("?")
    if not sep:
        return name, SimOptions()
    options = parse_qs(query, keep_blank_values=True)
    unknown = sorted(set(options) - set(KNOWN))
    if unknown:
        raise UserError(f"model {name!r}: unknown option(s) {', '.join(unknown)} (simulated models take "
                        "?latency=SECONDS, ?noise=P (0-1) and ?seed=N)")
    latency = _number(name, "latency", options.get("latency", ["0"])[-1], "a number of seconds", 0, 600)
    noise = _number(name, "noise", options.get("noise", ["0"])[-1], "a probability", 0, 1)
    raw_seed = options.get("seed", ["0"])[-1]
    try:
        seed = int(raw_seed)
    except ValueError:
        raise UserError(f"model {name!r}: seed must be an integer, got {raw_seed!r}") from None
    return base, SimOptions(latency=latency, noise=noise, seed=seed)


def _number(name: str, key: str, raw: str, kind: str, low: float, high: float) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise UserError(f"model {name!r}: {key} must be {kind}, got {raw!r}") from None
    if not low <= value <= high:   # also refuses nan
        raise UserError(f"model {name!r}: {key} must be between {low:g} and {high:g}, got {raw}")
    return value
