"""grep_lite matching case-insensitively by lower-casing through the regex flag table and
writing straight to sys.stdout."""
import argparse
import re
import sys

__all__ = ["main"]

_OK, _NOTHING, _TROUBLE = 0, 1, 2


def _parse(argv):
    p = argparse.ArgumentParser(prog="grep_lite", add_help=True)
    p.add_argument("-i", action="store_const", const=re.IGNORECASE, default=0, dest="flags")
    p.add_argument("-v", action="store_true", dest="invert")
    p.add_argument("-n", action="store_true", dest="lineno")
    p.add_argument("-c", action="store_true", dest="counting")
    p.add_argument("pattern")
    p.add_argument("targets", nargs="+")
    return p.parse_args(argv)


def main(argv=None):
    try:
        opt = _parse(argv)
    except SystemExit as exc:
        return _TROUBLE if exc.code else _OK
    try:
        rx = re.compile(opt.pattern, opt.flags)
    except re.error:
        sys.stderr.write(f"grep_lite: cannot compile {opt.pattern!r}\n")
        return _TROUBLE
    many = len(opt.targets) > 1
    seen = 0
    broken = []
    for target in opt.targets:
        try:
            stream = open(target, encoding="utf-8")
        except OSError as exc:
            broken.append(target)
            sys.stderr.write(f"grep_lite: {target}: {exc.__class__.__name__}\n")
            continue
        here = 0
        with stream:
            number = 0
            for line in stream:
                number += 1
                line = line.removesuffix("\n")
                if (rx.search(line) is None) == opt.invert:
                    here += 1
                    if not opt.counting:
                        parts = [target] if many else []
                        if opt.lineno:
                            parts.append(str(number))
                        parts.append(line)
                        sys.stdout.write(":".join(parts) + "\n")
        if opt.counting:
            sys.stdout.write((target + ":" if many else "") + f"{here}\n")
        seen += here
    if broken:
        return _TROUBLE
    return _OK if seen else _NOTHING
