"""SemVer with a slotted value class, cmp_to_key ordering and regex-tokenised ranges."""
import functools
import re

_FULL = re.compile(
    r"^(?P<major>0|[1-9][0-9]*)\.(?P<minor>0|[1-9][0-9]*)\.(?P<patch>0|[1-9][0-9]*)"
    r"(?:-(?P<pre>[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?"
    r"(?:\+(?P<build>[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?\Z"
)


def _compare_ids(x, y):
    if type(x) is int and type(y) is int:
        return (x > y) - (x < y)
    if type(x) is int:
        return -1
    if type(y) is int:
        return 1
    return (x > y) - (x < y)


def _compare(a, b):
    for x, y in zip(a._core(), b._core()):
        if x != y:
            return -1 if x < y else 1
    pa, pb = a.prerelease, b.prerelease
    if not pa or not pb:
        return (not pa) - (not pb)
    for x, y in zip(pa, pb):
        c = _compare_ids(x, y)
        if c:
            return c
    return (len(pa) > len(pb)) - (len(pa) < len(pb))


@functools.total_ordering
class Version:
    __slots__ = ("major", "minor", "patch", "prerelease", "build")

    def __init__(self, major, minor, patch, prerelease=(), build=()):
        self.major = major
        self.minor = minor
        self.patch = patch
        self.prerelease = tuple(prerelease)
        self.build = tuple(build)

    @classmethod
    def parse(cls, text):
        if not isinstance(text, str):
            raise TypeError("text must be a string")
        m = _FULL.match(text)
        if not m:
            raise ValueError("not a semantic version: %r" % text)
        pre = []
        if m.group("pre"):
            for ident in m.group("pre").split("."):
                if re.fullmatch(r"[0-9]+", ident):
                    if len(ident) > 1 and ident.startswith("0"):
                        raise ValueError("numeric prerelease identifier with leading zero")
                    pre.append(int(ident))
                else:
                    pre.append(ident)
        build = m.group("build").split(".") if m.group("build") else []
        return cls(int(m.group("major")), int(m.group("minor")), int(m.group("patch")), pre, build)

    def _core(self):
        return (self.major, self.minor, self.patch)

    def __str__(self):
        text = "{}.{}.{}".format(*self._core())
        if self.prerelease:
            text += "-" + ".".join(str(i) for i in self.prerelease)
        if self.build:
            text += "+" + ".".join(self.build)
        return text

    def __eq__(self, other):
        if not isinstance(other, Version):
            return NotImplemented
        return _compare(self, other) == 0

    def __lt__(self, other):
        if not isinstance(other, Version):
            return NotImplemented
        return _compare(self, other) < 0

    def __hash__(self):
        return hash(self._core() + self.prerelease)


_TOKEN = re.compile(r"\|\||[^\s|]+|\|")
_OPERATORS = ("^", "~", ">=", "<=", ">", "<", "=")


def _parse_token(tok):
    for op in _OPERATORS:
        if tok.startswith(op):
            return op, Version.parse(tok[len(op):])
    return "=", Version.parse(tok)


def _upper(op, v):
    if op == "~":
        return Version(v.major, v.minor + 1, 0)
    if v.major > 0:
        return Version(v.major + 1, 0, 0)
    if v.minor > 0:
        return Version(0, v.minor + 1, 0)
    return Version(0, 0, v.patch + 1)


def _satisfies(v, op, bound):
    c = _compare(v, bound)
    if op in ("^", "~"):
        return c >= 0 and _compare(v, _upper(op, bound)) < 0
    return {"=": c == 0, ">": c > 0, ">=": c >= 0, "<": c < 0, "<=": c <= 0}[op]


class Range:
    def __init__(self, text):
        if not isinstance(text, str):
            raise TypeError("range must be a string")
        groups, current = [], []
        for tok in _TOKEN.findall(text):
            if tok == "||":
                groups.append(current)
                current = []
            elif tok == "|":
                raise ValueError("single '|' in range")
            else:
                current.append(None if tok == "*" else _parse_token(tok))
        groups.append(current)
        if any(not g for g in groups):
            raise ValueError("range has an empty comparator set")
        self._groups = [[c for c in g if c is not None] for g in groups]

    def contains(self, version):
        v = version if isinstance(version, Version) else Version.parse(version)
        for group in self._groups:
            if not all(_satisfies(v, op, bound) for op, bound in group):
                continue
            if v.prerelease and not any(b.prerelease and b._core() == v._core() for _, b in group):
                continue
            return True
        return False

    def __contains__(self, version):
        return self.contains(version)


def max_satisfying(versions, range_text):
    rng = Range(range_text)
    items = list(versions)
    parsed = [i if isinstance(i, Version) else Version.parse(i) for i in items]
    matching = [k for k, v in enumerate(parsed) if rng.contains(v)]
    if not matching:
        return None
    order = functools.cmp_to_key(lambda i, j: _compare(parsed[i], parsed[j]) or (j - i))
    return items[max(matching, key=order)]
