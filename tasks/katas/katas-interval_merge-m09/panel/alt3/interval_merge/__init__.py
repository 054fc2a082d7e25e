"""Interval unions kept as a flat sorted boundary list [s0, e0, s1, e1, ...] updated with bisect."""
from bisect import bisect_left, bisect_right


class _Boundaries:
    def __init__(self):
        self.points = []

    def add(self, lo, hi):
        if not lo < hi:
            return
        pts = self.points
        # everything from the first boundary >= lo to the last boundary <= hi is swallowed
        i = bisect_left(pts, lo)
        j = bisect_right(pts, hi)
        new = []
        if i % 2 == 0:
            new.append(lo)          # lo is outside every interval: it starts one
        if j % 2 == 0:
            new.append(hi)          # hi is outside every interval: it ends one
        pts[i:j] = new

    def pairs(self):
        p = self.points
        return [(p[k], p[k + 1]) for k in range(0, len(p), 2)]


def _number(value, what):
    if type(value) is bool or not isinstance(value, (int, float)):
        raise TypeError(f"{what} must be int or float")
    return value


def _read(intervals):
    found = []
    for iv in intervals:
        if not isinstance(iv, (tuple, list)):
            raise TypeError("interval must be a tuple or list")
        if len(iv) != 2:
            raise TypeError("interval must have two elements")
        lo = _number(iv[0], "start")
        hi = _number(iv[1], "end")
        if hi < lo:
            raise ValueError("end before start")
        found.append((lo, hi))
    return found


def _build(pairs):
    b = _Boundaries()
    for lo, hi in pairs:
        b.add(lo, hi)
    return b.pairs()


def merge(intervals):
    return _build(_read(intervals))


def insert(intervals, new):
    existing = _read(intervals)
    return _build(existing + _read([new]))


def subtract(intervals, removed):
    kept = _build(_read(intervals))
    holes = _build(_read(removed))
    out = []
    for lo, hi in kept:
        cursor = lo
        for h_lo, h_hi in holes:
            if h_hi <= cursor or h_lo >= hi:
                continue
            if h_lo > cursor:
                out.append((cursor, h_lo))
            cursor = h_hi
            if cursor >= hi:
                break
        if cursor < hi:
            out.append((cursor, hi))
    return out


def intersect(a, b):
    first, second = _build(_read(a)), _build(_read(b))
    pieces = []
    for lo, hi in first:
        for lo2, hi2 in second:
            if lo2 >= hi:
                break
            top, bottom = min(hi, hi2), max(lo, lo2)
            if bottom < top:
                pieces.append((bottom, top))
    return pieces


def contains(intervals, point):
    _number(point, "point")
    pts = [x for pair in _build(_read(intervals)) for x in pair]
    return bisect_right(pts, point) % 2 == 1


def total_length(intervals):
    total = 0
    for lo, hi in _build(_read(intervals)):
        total += hi - lo
    return total
