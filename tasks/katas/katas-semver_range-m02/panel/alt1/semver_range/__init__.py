"""SemVer with a hand-written three-way comparison and predicate lists for ranges."""

_ALNUM = set("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-")


def _core_number(s):
    if not s or not s.isascii() or not s.isdigit() or (len(s) > 1 and s[0] == "0"):
        raise ValueError(f"bad version number {s!r}")
    return int(s)


def _identifiers(s, numeric_rules):
    parts = s.split(".")
    out = []
    for p in parts:
        if not p or any(c not in _ALNUM for c in p):
            raise ValueError(f"bad identifier {p!r}")
        if numeric_rules and p.isdigit():
            if len(p) > 1 and p[0] == "0":
                raise ValueError(f"numeric identifier with leading zero {p!r}")
            out.append(int(p))
        else:
            out.append(p)
    return tuple(out)


def _cmp_pre(a, b):
    if not a and not b:
        return 0
    if not a:
        return 1
    if not b:
        return -1
    for x, y in zip(a, b):
        if x == y:
            continue
        xi, yi = isinstance(x, int), isinstance(y, int)
        if xi and yi:
            return -1 if x < y else 1
        if xi != yi:
            return -1 if xi else 1
        return -1 if x < y else 1
    return (len(a) > len(b)) - (len(a) < len(b))


class Version:
    def __init__(self, major, minor, patch, prerelease=(), build=()):
        self.major, self.minor, self.patch = major, minor, patch
        self.prerelease, self.build = tuple(prerelease), tuple(build)

    @classmethod
    def parse(cls, text):
        if not isinstance(text, str):
            raise TypeError("Version.parse needs a str")
        rest, plus, build_text = text.partition("+")
        if plus and not build_text:
            raise ValueError("empty build")
        core, dash, pre_text = rest.partition("-")
        if dash and not pre_text:
            raise ValueError("empty prerelease")
        nums = core.split(".")
        if len(nums) != 3:
            raise ValueError(f"expected MAJOR.MINOR.PATCH in {text!r}")
        major, minor, patch = (_core_number(n) for n in nums)
        pre = _identifiers(pre_text, True) if dash else ()
        build = _identifiers(build_text, False) if plus else ()
        return cls(major, minor, patch, pre, build)

    def __str__(self):
        s = "%d.%d.%d" % (self.major, self.minor, self.patch)
        if self.prerelease:
            s += "-" + ".".join(str(p) for p in self.prerelease)
        if self.build:
            s += "+" + ".".join(self.build)
        return s

    def __repr__(self):
        return f"Version({str(self)!r})"

    def compare(self, other):
        for x, y in ((self.major, other.major), (self.minor, other.minor), (self.patch, other.patch)):
            if x != y:
                return -1 if x < y else 1
        return _cmp_pre(self.prerelease, other.prerelease)

    def __eq__(self, other):
        return isinstance(other, Version) and self.compare(other) == 0

    def __ne__(self, other):
        return not self == other

    def __lt__(self, other):
        return self.compare(other) < 0

    def __le__(self, other):
        return self.compare(other) <= 0

    def __gt__(self, other):
        return self.compare(other) > 0

    def __ge__(self, other):
        return self.compare(other) >= 0

    def __hash__(self):
        return hash((self.major, self.minor, self.patch, self.prerelease))


def _version(v):
    return v if isinstance(v, Version) else Version.parse(v)


def _comparator(token):
    if token == "*":
        return [lambda v: True], None
    for op in (">=", "<=", ">", "<", "=", "^", "~"):
        if token.startswith(op):
            body = token[len(op):]
            break
    else:
        op, body = "=", token
    bound = Version.parse(body)
    if op == "^":
        if bound.major:
            top = Version(bound.major + 1, 0, 0)
        elif bound.minor:
            top = Version(0, bound.minor + 1, 0)
        else:
            top = Version(0, 0, bound.patch + 1)
        return [lambda v: v >= bound, lambda v: v < top], bound
    if op == "~":
        top = Version(bound.major, bound.minor + 1, 0)
        return [lambda v: v >= bound, lambda v: v < top], bound
    checks = {"=": lambda v: v.compare(bound) == 0, ">": lambda v: v.compare(bound) > 0,
              ">=": lambda v: v.compare(bound) >= 0, "<": lambda v: v.compare(bound) < 0,
              "<=": lambda v: v.compare(bound) <= 0}
    return [checks[op]], bound


class Range:
    def __init__(self, text):
        if not isinstance(text, str):
            raise TypeError("Range needs a str")
        self.alternatives = []
        for chunk in text.split("||"):
            preds, written = [], []
            for token in chunk.split():
                p, w = _comparator(token)
                preds += p
                if w is not None:
                    written.append(w)
            if not preds:
                raise ValueError("empty comparator set in range")
            self.alternatives.append((preds, written))

    def contains(self, version):
        v = _version(version)
        for preds, written in self.alternatives:
            if all(p(v) for p in preds):
                if not v.prerelease or any(
                        w.prerelease and (w.major, w.minor, w.patch) == (v.major, v.minor, v.patch)
                        for w in written):
                    return True
        return False

    __contains__ = contains


def max_satisfying(versions, range_text):
    r = Range(range_text)
    winner = None
    for item in versions:
        if r.contains(item) and (winner is None or _version(item) > _version(winner)):
            winner = item
    return winner
