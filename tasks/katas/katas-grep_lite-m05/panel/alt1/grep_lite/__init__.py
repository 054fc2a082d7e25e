"""grep_lite reading each file whole and collecting output lines before printing them."""
import argparse
import re
import sys

__all__ = ["main"]


def main(argv=None):
    ap = argparse.ArgumentParser(prog="grep_lite")
    for flag in ("-i", "-v", "-n", "-c"):
        ap.add_argument(flag, action="store_true")
    ap.add_argument("pattern")
    ap.add_argument("files", nargs="+")
    try:
        opts = ap.parse_args(argv)
    except SystemExit as stop:
        return stop.code if isinstance(stop.code, int) else 2
    try:
        rx = re.compile(opts.pattern, re.I if opts.i else 0)
    except re.error:
        sys.stderr.write("grep_lite: bad regular expression\n")
        return 2
    status = 1
    trouble = False
    label = len(opts.files) > 1
    for name in opts.files:
        try:
            with open(name, "r", encoding="utf-8") as fh:
                text = fh.read()
        except OSError:
            sys.stderr.write(f"grep_lite: cannot open {name}\n")
            trouble = True
            continue
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()  # the newline that ends the file does not start another line
        hits = [(k, ln) for k, ln in enumerate(lines, 1) if bool(rx.search(ln)) ^ opts.v]
        if hits:
            status = 0
        head = name + ":" if label else ""
        if opts.c:
            print(f"{head}{len(hits)}")
        else:
            for k, ln in hits:
                print(head + (f"{k}:" if opts.n else "") + ln)
    return 2 if trouble else status
