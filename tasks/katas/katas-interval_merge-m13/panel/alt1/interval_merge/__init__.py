"""Interval unions via a coverage sweep: every operation is a boolean rule on +1/-1 events."""


def _num(x):
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise TypeError("not a number: %r" % (x,))
    return x


def _pairs(intervals):
    out = []
    for item in intervals:
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise TypeError("bad interval %r" % (item,))
        lo, hi = _num(item[0]), _num(item[1])
        if lo > hi:
            raise ValueError("start after end in %r" % (item,))
        out.append((lo, hi))
    return out


def _sweep(groups, rule):
    """groups: list of interval lists; rule(list of per-group coverage counts) -> bool."""
    events = []
    for g, pairs in enumerate(groups):
        for lo, hi in pairs:
            if lo < hi:
                events.append((lo, g, 1))
                events.append((hi, g, -1))
    events.sort(key=lambda e: e[0])
    depth = [0] * len(groups)
    result, open_at = [], None
    i = 0
    while i < len(events):
        x = events[i][0]
        # apply every event at the same coordinate before judging coverage
        while i < len(events) and events[i][0] == x:
            depth[events[i][1]] += events[i][2]
            i += 1
        inside = rule(depth)
        if inside and open_at is None:
            open_at = x
        elif not inside and open_at is not None:
            if result and result[-1][1] == open_at:
                result[-1] = (result[-1][0], x)
            else:
                result.append((open_at, x))
            open_at = None
    return result


def merge(intervals):
    return _sweep([_pairs(intervals)], lambda d: d[0] > 0)


def insert(intervals, new):
    return _sweep([_pairs(intervals) + _pairs([new])], lambda d: d[0] > 0)


def subtract(intervals, removed):
    return _sweep([_pairs(intervals), _pairs(removed)], lambda d: d[0] > 0 and d[1] == 0)


def intersect(a, b):
    return _sweep([_pairs(a), _pairs(b)], lambda d: d[0] > 0 and d[1] > 0)


def contains(intervals, point):
    _num(point)
    return any(lo <= point < hi for lo, hi in _pairs(intervals))


def total_length(intervals):
    return sum((hi - lo for lo, hi in merge(intervals)), 0)
