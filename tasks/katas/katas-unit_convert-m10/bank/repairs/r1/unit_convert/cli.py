"""Command line front end for the converter."""
import argparse
import math
import sys

from unit_convert.units import ConversionError, convert

EXIT_OK, EXIT_CONVERSION, EXIT_USAGE = 0, 1, 2
DEFAULT_PRECISION = 2
MAX_PRECISION = 10


def _finite_float(text):
    value = float(text)  # argparse turns the ValueError into a usage error
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"value must be finite: {text}")
    return value


def _precision(text):
    digits = int(text)
    if digits < 0 or digits > MAX_PRECISION:
        raise argparse.ArgumentTypeError(f"precision must be between 0 and {MAX_PRECISION}")
    return digits


def _parser():
    parser = argparse.ArgumentParser(prog="unit_convert", description="Convert a quantity between units.")
    parser.add_argument("value", type=_finite_float)
    parser.add_argument("source", metavar="FROM")
    parser.add_argument("target", metavar="TO")
    parser.add_argument("--precision", type=_precision, default=DEFAULT_PRECISION)
    return parser


def format_number(value, digits):
    text = f"{value:.{digits}f}"
    # "-0.00" and friends: the sign of a value that rounds to zero carries no information.
    if text.startswith("-") and float(text) == 0:
        text = text[1:]
    return text


def main(argv=None):
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    try:
        result = convert(args.value, args.source, args.target)
    except ConversionError as exc:
        print(f"unit_convert: error: {exc}", file=sys.stderr)
        return EXIT_CONVERSION
    p = args.precision
    print(f"{format_number(args.value, p)} {args.source} = {format_number(result, p)} {args.target}")
    return EXIT_OK
