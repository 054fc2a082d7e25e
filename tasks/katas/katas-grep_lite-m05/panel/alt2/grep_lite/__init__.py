"""grep_lite as a pipeline of generators: files -> numbered lines -> selected lines -> text."""
import argparse
import re
import sys

__all__ = ["main"]


class _Unreadable(Exception):
    pass


def numbered_lines(path):
    try:
        fh = open(path, encoding="utf-8")
    except OSError as err:
        raise _Unreadable(f"grep_lite: {path}: {err.strerror}") from None
    with fh:
        lineno = 0
        for raw in fh:
            lineno += 1
            yield lineno, raw[:-1] if raw.endswith("\n") else raw


def selected(lines, test, invert):
    return ((n, s) for n, s in lines if bool(test(s)) is not invert)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="grep_lite")
    parser.add_argument("-i", "--ignore-case", action="store_true")
    parser.add_argument("-v", "--invert-match", action="store_true")
    parser.add_argument("-n", "--line-number", action="store_true")
    parser.add_argument("-c", "--count", action="store_true")
    parser.add_argument("pattern")
    parser.add_argument("paths", nargs="+")
    try:
        ns = parser.parse_args(argv)
    except SystemExit as e:
        return 2 if e.code not in (0, None) else 0
    try:
        test = re.compile(ns.pattern, re.IGNORECASE * ns.ignore_case).search
    except re.error as err:
        print(f"grep_lite: {err}", file=sys.stderr)
        return 2
    errors = 0
    matched = 0
    show_name = len(ns.paths) > 1
    for path in ns.paths:
        tag = f"{path}:" if show_name else ""
        try:
            picked = selected(numbered_lines(path), test, ns.invert_match)
            if ns.count:
                n = sum(1 for _ in picked)
                print(f"{tag}{n}")
                matched += n
            else:
                for n, s in picked:
                    print(f"{tag}{n}:{s}" if ns.line_number else f"{tag}{s}")
                    matched += 1
        except _Unreadable as err:
            print(err, file=sys.stderr)
            errors += 1
    if errors:
        return 2
    return 0 if matched else 1
