"""SemVer: a dataclass with a precomputed sort key; ranges read by a character scanner."""
from dataclasses import dataclass, field
import string

_ID_CHARS = frozenset(string.ascii_letters + string.digits + "-")
_DIGITS = frozenset(string.digits)


def _number(text, what):
    if not text or not set(text) <= _DIGITS or (text[0] == "0" and len(text) > 1):
        raise ValueError(f"bad {what} {text!r}")
    return int(text)


def _idents(text, what):
    items = text.split(".")
    if any(not item or not set(item) <= _ID_CHARS for item in items):
        raise ValueError(f"bad {what} {text!r}")
    return items


@dataclass(frozen=True, eq=False)
class Version:
    major: int
    minor: int
    patch: int
    prerelease: tuple = ()
    build: tuple = ()
    sort_key: tuple = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        if self.prerelease:
            pre = tuple((0, i, "") if isinstance(i, int) else (1, 0, i) for i in self.prerelease)
            key = (self.major, self.minor, self.patch, 0, pre)
        else:
            key = (self.major, self.minor, self.patch, 1, ())
        object.__setattr__(self, "sort_key", key)

    @classmethod
    def parse(cls, text):
        if not isinstance(text, str):
            raise TypeError("parse() argument must be str")
        build = ()
        if "+" in text:
            text, build_text = text.split("+", 1)
            build = tuple(_idents(build_text, "build"))
        pre = ()
        if "-" in text:
            text, pre_text = text.split("-", 1)
            converted = []
            for item in _idents(pre_text, "prerelease"):
                converted.append(_number(item, "numeric identifier") if set(item) <= _DIGITS else item)
            pre = tuple(converted)
        parts = text.split(".")
        if len(parts) != 3:
            raise ValueError(f"bad version core {text!r}")
        return cls(*(_number(p, "version number") for p in parts), pre, build)

    def __str__(self):
        s = f"{self.major}.{self.minor}.{self.patch}"
        if self.prerelease:
            s = f"{s}-{'.'.join(str(i) for i in self.prerelease)}"
        if self.build:
            s = f"{s}+{'.'.join(self.build)}"
        return s

    def __eq__(self, other):
        return isinstance(other, Version) and self.sort_key == other.sort_key

    def __hash__(self):
        return hash(self.sort_key)

    def __lt__(self, other):
        return self.sort_key < other.sort_key

    def __le__(self, other):
        return self.sort_key <= other.sort_key

    def __gt__(self, other):
        return self.sort_key > other.sort_key

    def __ge__(self, other):
        return self.sort_key >= other.sort_key


def _scan(text):
    """Split into sets of (operator, version text) using a character scanner."""
    sets, current, i = [], [], 0
    text = text.strip()
    while True:
        while i < len(text) and text[i] in " \t\r\n\f\v":
            i += 1
        if i >= len(text) or text.startswith("||", i):
            if not current:
                raise ValueError("empty comparator set")
            sets.append(current)
            current = []
            if i >= len(text):
                return sets
            i += 2
            continue
        j = i
        while j < len(text) and not text[j].isspace() and not text.startswith("||", j):
            j += 1
        word = text[i:j]
        op = next((o for o in (">=", "<=", ">", "<", "=", "^", "~") if word.startswith(o)), "")
        current.append((op, word[len(op):]))
        i = j


class Range:
    def __init__(self, text):
        if not isinstance(text, str):
            raise TypeError("Range() argument must be str")
        self._sets = []
        for raw in _scan(text):
            checks, anchors = [], []
            for op, body in raw:
                if op == "" and body == "*":
                    continue
                v = Version.parse(body)
                anchors.append(v)
                if op in ("^", "~"):
                    if op == "~":
                        top = Version(v.major, v.minor + 1, 0)
                    elif v.major:
                        top = Version(v.major + 1, 0, 0)
                    elif v.minor:
                        top = Version(0, v.minor + 1, 0)
                    else:
                        top = Version(0, 0, v.patch + 1)
                    checks += [(">=", v), ("<", top)]
                else:
                    checks.append((op or "=", v))
            self._sets.append((checks, anchors))

    @staticmethod
    def _check(v, op, bound):
        if op == "=":
            return v == bound
        if op == ">":
            return v > bound
        if op == ">=":
            return v >= bound
        if op == "<":
            return v < bound
        return v <= bound

    def contains(self, version):
        v = version if isinstance(version, Version) else Version.parse(version)
        core = (v.major, v.minor, v.patch)
        for checks, anchors in self._sets:
            if all(self._check(v, op, b) for op, b in checks) and (
                    not v.prerelease or any(a.prerelease and (a.major, a.minor, a.patch) == core for a in anchors)):
                return True
        return False

    def __contains__(self, version):
        return self.contains(version)


def max_satisfying(versions, range_text):
    rng = Range(range_text)
    found = None
    for item in versions:
        v = item if isinstance(item, Version) else Version.parse(item)
        if rng.contains(v) and (found is None or v > found[0]):
            found = (v, item)
    return None if found is None else found[1]
