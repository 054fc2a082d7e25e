"""grep_lite: select lines of text files by regular expression."""
import argparse
import re
import sys

__all__ = ["main"]

EXIT_SELECTED, EXIT_NONE, EXIT_ERROR = 0, 1, 2


def _parser():
    parser = argparse.ArgumentParser(prog="grep_lite", description="Print lines matching a pattern.")
    parser.add_argument("-i", dest="ignore_case", action="store_true", help="ignore case")
    parser.add_argument("-v", dest="invert", action="store_true", help="select non-matching lines")
    parser.add_argument("-n", dest="numbers", action="store_true", help="show line numbers")
    parser.add_argument("-c", dest="count", action="store_true", help="only count selected lines")
    parser.add_argument("pattern")
    parser.add_argument("files", nargs="+", metavar="FILE")
    return parser


def _read_lines(path):
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            yield line.rstrip("\n")


def _scan(regex, path, args, prefix):
    """Print the selected lines of one file (or their count); return how many were selected."""
    selected = 0
    for number, line in enumerate(_read_lines(path), start=1):
        if (regex.match(line.strip()) is not None) != args.invert:
            selected += 1
            if not args.count:
                shown = f"{number}:{line}" if args.numbers else line
                print(prefix + shown)
    if args.count:
        print(f"{prefix}{selected}")
    return selected


def main(argv=None):
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else EXIT_ERROR
    flags = re.IGNORECASE if args.ignore_case else 0
    try:
        regex = re.compile(args.pattern, flags)
    except re.error as exc:
        print(f"grep_lite: invalid pattern {args.pattern!r}: {exc}", file=sys.stderr)
        return EXIT_ERROR
    many = len(args.files) > 1
    total = 0
    failed = False
    for path in args.files:
        prefix = f"{path}:" if many else ""
        try:
            total += _scan(regex, path, args, prefix)
        except OSError as exc:
            print(f"grep_lite: {path}: {exc.strerror or exc}", file=sys.stderr)
            failed = True
    if failed:
        return EXIT_ERROR
    return EXIT_SELECTED if total else EXIT_NONE
