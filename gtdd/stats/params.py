"""Checking and converting the numbers the audit formulas take.

Probabilities (tolerances, error targets) are kept as exact fractions so that integer thresholds
such as K_rho = floor(rho N) + 1 never depend on binary rounding. A float is read as the decimal it
prints as: 0.05 means 1/20, not the nearest binary double (whose floor(rho N) could differ).

Every check raises `UserError` with a message that names the parameter in its command-line spelling
(`failures-allowed`), which is also recognisable from the Python keyword (`failures_allowed`).
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from typing import Literal, TypeAlias

from testhelix.core.errors import UserError

Number: TypeAlias = int | float | str | Fraction
Method = Literal["auto", "exact", "log"]
METHODS: tuple[str, ...] = ("auto", "exact", "log")


def _label(name: str) -> str:
    return name.replace("_", "-")


def as_fraction(value: Number, name: str) -> Fraction:
    """An exact rational from an int, a decimal string, a fraction string or a float."""
    if isinstance(value, bool):
        raise UserError(f"{_label(name)} must be a number, got {value!r}")
    if isinstance(value, Fraction):
        return value
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise UserError(f"{_label(name)} must be finite, got {value!r}")
        return Fraction(repr(value))
    if isinstance(value, str):
        _check_precision(value.strip(), name)
        try:
            return Fraction(value.strip())
        except (ValueError, ZeroDivisionError):
            raise UserError(f"{_label(name)} is not a number: {value!r}") from None
    raise UserError(f"{_label(name)} must be a number, got {type(value).__name__}")


# A probability written with more digits or a larger exponent than these is refused before it is
# converted: Fraction("1e-999999999") would build a billion-digit integer and compute for minutes.
MAX_DIGITS, MAX_EXPONENT = 40, 300
_DECIMAL = re.compile(r"[+-]?(?P<mantissa>\d*\.?\d*)(?:[eE](?P<exponent>[+-]?\d+))?")


def _check_precision(text: str, name: str) -> None:
    for part in text.split("/", 1):
        m = _DECIMAL.fullmatch(part.strip())
        if m is None:
            continue  # Fraction refuses it with the usual message
        digits = sum(c.isdigit() for c in m["mantissa"])
        exponent = m["exponent"]
        if digits > MAX_DIGITS or (exponent is not None and (len(exponent) > 6 or abs(int(exponent)) > MAX_EXPONENT)):
            raise UserError(f"{_label(name)} {text[:60]!r}: more precision than supported (at most {MAX_DIGITS} "
                            f"digits and an exponent within +-{MAX_EXPONENT})")


def open_unit(value: Number, name: str) -> Fraction:
    """A probability strictly between 0 and 1 (tolerance rho, error target alpha)."""
    frac = as_fraction(value, name)
    if not 0 < frac < 1:
        raise UserError(f"{_label(name)} must be strictly between 0 and 1, got {value}")
    return frac


def positive_probability(value: Number, name: str) -> Fraction:
    """A probability in (0, 1]: an error allocation or a bound on a pass probability."""
    frac = as_fraction(value, name)
    if not 0 < frac <= 1:
        raise UserError(f"{_label(name)} must be in (0, 1], got {value}")
    return frac


def count(value: object, name: str, minimum: int = 0) -> int:
    """A whole number at least `minimum` (a population, a failure count, a number of rounds)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise UserError(f"{_label(name)} must be a whole number, got {value!r}")
    if value < minimum:
        what = "nonnegative" if minimum == 0 else f"at least {minimum}"
        raise UserError(f"{_label(name)} must be {what}, got {value}")
    return value


def at_most(value: int, name: str, limit: int, limit_name: str) -> int:
    if value > limit:
        raise UserError(f"{_label(name)} ({value}) must not exceed {limit_name} ({limit})")
    return value


def method(value: str) -> Method:
    if value not in METHODS:
        raise UserError(f"method must be one of {', '.join(METHODS)}, got {value!r}")
    return value  # type: ignore[return-value]


def log_of(value: Fraction) -> float:
    """Natural log of a positive rational whose numerator or denominator may be huge."""
    # math.log accepts arbitrarily large ints exactly, where float(value) could underflow.
    return math.log(value.numerator) - math.log(value.denominator)
