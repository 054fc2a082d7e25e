"""SemVer where every comparator set is reduced to one interval [low, high] with open/closed ends."""
import re
from typing import NamedTuple, Tuple

_CORE = re.compile(r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)", re.ASCII)
_IDENT = re.compile(r"[0-9A-Za-z-]+", re.ASCII)


class _Fields(NamedTuple):
    major: int
    minor: int
    patch: int
    prerelease: Tuple = ()
    build: Tuple = ()


class Version(_Fields):
    @classmethod
    def parse(cls, text):
        if not isinstance(text, str):
            raise TypeError("expected str")
        head, _, build = text.partition("+") if "+" in text else (text, "", None)
        core, _, pre = head.partition("-") if "-" in head else (head, "", None)
        m = _CORE.fullmatch(core)
        if not m:
            raise ValueError(f"invalid core in {text!r}")
        prerelease = ()
        if pre is not None:
            items = []
            for ident in pre.split("."):
                if not _IDENT.fullmatch(ident):
                    raise ValueError(f"invalid prerelease in {text!r}")
                if ident.isdigit():
                    if ident != "0" and ident.startswith("0"):
                        raise ValueError(f"leading zero in {text!r}")
                    items.append(int(ident))
                else:
                    items.append(ident)
            prerelease = tuple(items)
        builds = ()
        if build is not None:
            builds = tuple(build.split("."))
            if not all(_IDENT.fullmatch(b) for b in builds):
                raise ValueError(f"invalid build in {text!r}")
        return cls(int(m.group(1)), int(m.group(2)), int(m.group(3)), prerelease, builds)

    def __str__(self):
        out = ".".join(map(str, (self.major, self.minor, self.patch)))
        if self.prerelease:
            out += "-" + ".".join(map(str, self.prerelease))
        if self.build:
            out += "+" + ".".join(self.build)
        return out

    @property
    def _order(self):
        ids = tuple((isinstance(i, str), i if isinstance(i, str) else "", i if isinstance(i, int) else 0)
                    for i in self.prerelease)
        return (self.major, self.minor, self.patch, not self.prerelease, ids)

    def __eq__(self, other):
        if not isinstance(other, Version):
            return NotImplemented
        return self._order == other._order

    def __ne__(self, other):
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __lt__(self, other):
        return self._order < other._order

    def __le__(self, other):
        return self._order <= other._order

    def __gt__(self, other):
        return self._order > other._order

    def __ge__(self, other):
        return self._order >= other._order

    def __hash__(self):
        return hash(self._order)


class _Interval:
    """low/high are Version or None (unbounded); *_closed says whether the end is included."""

    def __init__(self):
        self.low, self.low_closed = None, True
        self.high, self.high_closed = None, True
        self.written = []

    def raise_low(self, v, closed):
        if self.low is None or v > self.low or (v == self.low and not closed):
            self.low, self.low_closed = v, closed

    def lower_high(self, v, closed):
        if self.high is None or v < self.high or (v == self.high and not closed):
            self.high, self.high_closed = v, closed

    def holds(self, v):
        if self.low is not None and (v < self.low or (v == self.low and not self.low_closed)):
            return False
        if self.high is not None and (v > self.high or (v == self.high and not self.high_closed)):
            return False
        if v.prerelease:
            return any(w.prerelease and w[:3] == v[:3] for w in self.written)
        return True


_OP = re.compile(r"(>=|<=|>|<|=|\^|~)?(\S+)")


def _add(interval, token):
    if token == "*":
        return
    op, body = _OP.fullmatch(token).groups()
    v = Version.parse(body)
    interval.written.append(v)
    if op in (None, "="):
        interval.raise_low(v, True)
        interval.lower_high(v, True)
    elif op in (">", ">="):
        interval.raise_low(v, op == ">=")
    elif op in ("<", "<="):
        interval.lower_high(v, op == "<=")
    else:
        interval.raise_low(v, True)
        if op == "~":
            interval.lower_high(Version(v.major, v.minor + 1, 0), False)
        elif v.major:
            interval.lower_high(Version(v.major + 1, 0, 0), False)
        elif v.minor:
            interval.lower_high(Version(0, v.minor + 1, 0), False)
        else:
            interval.lower_high(Version(0, 0, v.patch + 1), False)


class Range:
    def __init__(self, text):
        if not isinstance(text, str):
            raise TypeError("range text must be str")
        self.intervals = []
        for piece in text.split("||"):
            tokens = piece.split()
            if not tokens:
                raise ValueError(f"empty set in range {text!r}")
            interval = _Interval()
            for token in tokens:
                _add(interval, token)
            self.intervals.append(interval)

    def contains(self, version):
        v = version if isinstance(version, Version) else Version.parse(version)
        return any(i.holds(v) for i in self.intervals)

    def __contains__(self, version):
        return self.contains(version)


def max_satisfying(versions, range_text):
    rng = Range(range_text)
    pairs = []
    for position, item in enumerate(versions):
        v = item if isinstance(item, Version) else Version.parse(item)
        if rng.contains(v):
            pairs.append((v, -position, item))
    if not pairs:
        return None
    return max(pairs, key=lambda p: (p[0]._order, p[1]))[2]
