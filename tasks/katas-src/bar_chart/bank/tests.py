import pytest

from bar_chart import render

FULL = "\u2588"
AXIS = "\u2502"


def bars(text):
    """Number of block cells on each line."""
    return [line.count(FULL) for line in text.split("\n")]


def test_smoke_returns_str():
    assert isinstance(render({"a": 1}), str)


def test_smoke_one_line_per_row():
    assert len(render({"a": 1, "b": 2}).split("\n")) == 2


def test_smoke_label_present():
    assert render({"cherry": 3}).startswith("cherry")


def test_largest_bar_fills_width():
    assert bars(render({"a": 7, "b": 3}, width=12))[0] == 12


def test_half_rounds_up():
    assert bars(render([("a", 1), ("b", 4)], width=10)) == [3, 10]


def test_minimum_one_cell_for_fraction():
    assert bars(render([("a", 200), ("b", 0.25)], width=5)) == [5, 1]


def test_all_zeros_render():
    assert render([("x", 0), ("y", 0)], width=3) == f"x {AXIS} 0\ny {AXIS} 0"


def test_value_sort_puts_biggest_first():
    out = render({"s": 1, "m": 5, "l": 9}, width=9, sort="value")
    assert out.split("\n")[0].startswith("l")


def test_alignment_of_axis():
    out = render([("x", 1), ("longer", 2)], width=2)
    positions = {line.index(AXIS) for line in out.split("\n")}
    assert positions == {7}


def test_zero_row_allowed():
    assert render([("none", 0), ("some", 1)], width=1).split("\n")[0] == f"none {AXIS} 0"


def test_title_rule_matches_title():
    lines = render({"a": 1}, title="Sales 2024").split("\n")
    assert lines[1] == "\u2500" * 10


def test_callable_fmt():
    assert render([("k", 2)], width=1, fmt=lambda v: "two").endswith(" two")


def test_scale_against_max():
    assert bars(render([("a", 1), ("b", 1)], width=6)) == [6, 6]


def test_overfit_exact_float_rounding():
    # 3.9 * 2 / 5.2 is 1.5 in real numbers but the binary floats sit just below it
    assert bars(render([("a", 3.9), ("b", 5.2)], width=2)) == [2, 2]


def test_overfit_error_message():
    with pytest.raises(ValueError, match="width must be at least 1"):
        render({"a": 1}, width=0)


def test_broken_expects_trailing_newline():
    assert render({"a": 1}, width=1).endswith("\n")


def test_broken_expects_percent_of_total():
    assert bars(render([("a", 1), ("b", 1)], width=10)) == [5, 5]
