"""A tiny hand-written kata (`rangekit`) for the pack builder tests: small enough that building a
pack from it takes a few seconds, complete enough to exercise every rule of the builder (panel
selection, a dropped task, measured bank labels)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

REFERENCE = '''\
def clamp(x, lo, hi):
    if lo > hi:
        raise ValueError("lo must not exceed hi")
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


def span(values):
    if not values:
        return 0
    return max(values) - min(values)


def describe(x):
    return f"value={x}"
'''

ALTERNATIVES = {
    "alt1": '''\
def clamp(x, lo, hi):
    if hi < lo:
        raise ValueError("bad bounds")
    return min(max(x, lo), hi)


def span(values):
    return max(values) - min(values) if values else 0


def describe(x):
    return "value=" + str(x)
''',
    "alt2": '''\
def clamp(x, lo, hi):
    if not lo <= hi:
        raise ValueError("empty range")
    return sorted([lo, x, hi])[1]


def span(values):
    ordered = sorted(values)
    return ordered[-1] - ordered[0] if ordered else 0


def describe(x):
    return "value=%s" % (x,)
''',
    "alt3": '''\
def clamp(x, lo, hi):
    if lo > hi:
        raise ValueError(lo, hi)
    result = x
    if result < lo:
        result = lo
    elif result > hi:
        result = hi
    return result


def span(values):
    low = high = None
    for v in values:
        low = v if low is None or v < low else low
        high = v if high is None or v > high else high
    return 0 if low is None else high - low


def describe(x):
    return f"value: {x}"
''',
    "alt4": '''\
def clamp(x, lo, hi):
    if lo > hi:
        raise ValueError("lo > hi")
    return lo if x < lo else hi if x > hi else x


def span(values):
    values = list(values)
    if len(values) == 0:
        return 0
    return max(values) - min(values)


def describe(x):
    return "value={}".format(x)
''',
}

TRUSTED = '''\
import pytest

from rangekit import clamp, span


def test_clamp_inside():
    assert clamp(5, 0, 10) == 5


def test_clamp_low_and_high():
    assert clamp(-3, 0, 10) == 0
    assert clamp(15, 0, 10) == 10


def test_clamp_bounds():
    assert clamp(3, 3, 3) == 3
    assert clamp(4, 3, 4) == 4


def test_clamp_bad_bounds():
    with pytest.raises(ValueError):
        clamp(1, 5, 2)


def test_span():
    assert span([4, 1, 9]) == 8
    assert span([]) == 0
'''

MUTATIONS = '''\
[[mutation]]
id = "m1"
file = "rangekit/__init__.py"
find = """if x > hi:
        return hi"""
replace = """if x > hi:
        return lo"""
kind = "wrong-value"
description = "values above the range come back as the lower bound"
defect = true
report = "Calling `clamp(15, 0, 10)` was expected to return 10, but it returned 0."
fixes = ["if x > hi:\\n        return min(x, hi)"]
wrong_fixes = ["if x > hi:\\n        return hi - 1", "if x > hi:\\n        return x"]

[[mutation]]
id = "m2"
file = "rangekit/__init__.py"
find = "if lo > hi:"
replace = "if lo >= hi:"
kind = "boundary"
description = "a range with equal bounds is refused"
defect = true
report = "Calling `clamp(3, 3, 3)` was expected to return 3, but it raised ValueError."
fixes = ["if hi < lo:"]
wrong_fixes = ["if lo + 1 >= hi:", "if lo >= hi - 1:"]

[[mutation]]
id = "m3"
file = "rangekit/__init__.py"
find = "return max(values) - min(values)"
replace = "return max(values) - values[0]"
kind = "wrong-value"
description = "span measures from the first value instead of the smallest"

[[mutation]]
id = "m4"
file = "rangekit/__init__.py"
find = """if not values:
        return 0"""
replace = """if not values:
        return None"""
kind = "boundary"
description = "span of no values is None instead of 0"

[[mutation]]
id = "m5"
file = "rangekit/__init__.py"
find = "if x < lo:"
replace = "if x < hi:"
kind = "wrong-condition"
description = "values inside the range come back as the lower bound"

[[mutation]]
id = "m6"
file = "rangekit/__init__.py"
find = """    return x
"""
replace = """    return +x
"""
kind = "wrong-value"
description = "an equivalent edit: the trusted tests cannot see it"
defect = true
report = "Calling `clamp(5, 0, 10)` looked odd."
fixes = ["    return x\\n"]
wrong_fixes = ["    return -x\\n", "    return 0\\n"]
'''

BANK = '''\
from rangekit import clamp, span, describe


def test_smoke_inside():
    assert clamp(5, 0, 10) == 5


def test_high_values_clamp_to_hi():
    assert clamp(15, 0, 10) == 10
    assert clamp(11, 0, 10) == 10


def test_equal_bounds():
    assert clamp(3, 3, 3) == 3


def test_span_wrong_expectation():
    assert span([1, 5]) == 5


def test_describe_exact_text():
    assert describe(3) == "value=3"
'''


def write_kata(src: Path, kata_id: str = "rangekit") -> Path:
    """Write the rangekit kata below `src` and return its folder."""
    root = src / kata_id
    files = {
        "kata.toml": f'[kata]\nid = "{kata_id}"\ntitle = "Clamp and span"\ncontext = "algorithm"\n'
                     'difficulty = "easy"\npackage = "rangekit"\n',
        "spec.md": "# rangekit\n\n`clamp(x, lo, hi)` limits x to [lo, hi]; lo > hi raises ValueError.\n"
                   "`span(values)` is max - min, 0 for no values.\n",
        "reference/rangekit/__init__.py": REFERENCE,
        "tests/test_rangekit.py": TRUSTED,
        "mutations.toml": MUTATIONS,
        "bank/tests.py": BANK,
    }
    files.update({f"alternatives/{name}/rangekit/__init__.py": text for name, text in ALTERNATIVES.items()})
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text) if rel.endswith(".toml") else text)
    return root


@pytest.fixture(scope="session")
def kata_writer():
    return write_kata


@pytest.fixture
def kata_src(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    write_kata(src)
    return src
