"""grep_lite with a small Searcher object holding the options and the running result."""
import argparse
import re
import sys

__all__ = ["main"]


class Searcher:
    def __init__(self, regex, invert, numbers, count, label_files):
        self.regex = regex
        self.invert = invert
        self.numbers = numbers
        self.count = count
        self.label_files = label_files
        self.any_selected = False
        self.had_error = False
        self.out = []

    def wanted(self, line):
        found = self.regex.search(line) is not None
        return not found if self.invert else found

    def file(self, path):
        try:
            handle = open(path, encoding="utf-8", newline=None)
        except OSError:
            print(f"grep_lite: {path}: No such file or directory", file=sys.stderr)
            self.had_error = True
            return
        label = path + ":" if self.label_files else ""
        hits = 0
        with handle:
            for idx, line in enumerate(handle.read().splitlines(), start=1):
                if not self.wanted(line):
                    continue
                hits += 1
                if not self.count:
                    self.out.append(label + (str(idx) + ":" if self.numbers else "") + line)
        if self.count:
            self.out.append(label + str(hits))
        self.any_selected = self.any_selected or hits > 0

    def code(self):
        if self.had_error:
            return 2
        return 0 if self.any_selected else 1


def main(argv=None):
    parser = argparse.ArgumentParser(prog="grep_lite")
    parser.add_argument("-i", action="store_true", dest="nocase")
    parser.add_argument("-v", action="store_true", dest="invert")
    parser.add_argument("-n", action="store_true", dest="numbers")
    parser.add_argument("-c", action="store_true", dest="count")
    parser.add_argument("pattern")
    parser.add_argument("file", nargs="+")
    try:
        a = parser.parse_args(argv)
    except SystemExit as ex:
        return ex.code if isinstance(ex.code, int) else 2
    try:
        regex = re.compile(a.pattern, flags=re.IGNORECASE if a.nocase else 0)
    except re.error as ex:
        print(f"grep_lite: pattern error: {ex}", file=sys.stderr)
        return 2
    s = Searcher(regex, a.invert, a.numbers, a.count, len(a.file) > 1)
    for path in a.file:
        s.file(path)
        if s.out:
            print("\n".join(s.out))
            s.out.clear()
    return s.code()
