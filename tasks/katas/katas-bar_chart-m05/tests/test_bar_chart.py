import math

import pytest

from bar_chart import render

B = "\u2588"
A = "\u2502"
R = "\u2500"


def test_spec_example():
    out = render({"apples": 10, "kiwis": 5, "figs": 0}, width=10)
    assert out == (f"apples {A}{B * 10} 10\n"
                   f"kiwis  {A}{B * 5} 5\n"
                   f"figs   {A} 0")


def test_default_width_is_40():
    out = render([("a", 2), ("b", 1)])
    assert out == f"a {A}{B * 40} 2\nb {A}{B * 20} 1"


def test_pairs_with_duplicate_labels():
    out = render([("x", 4), ("x", 2)], width=4)
    assert out == f"x {A}{B * 4} 4\nx {A}{B * 2} 2"


def test_labels_are_stringified_and_padded_to_longest():
    out = render([(1, 3), ("three", 3), (None, 3)], width=3)
    assert out.split("\n") == [f"1     {A}{B * 3} 3", f"three {A}{B * 3} 3", f"None  {A}{B * 3} 3"]


def test_longest_label_not_first():
    out = render([("a", 1), ("bbbb", 1)], width=2)
    assert out == f"a    {A}{B * 2} 1\nbbbb {A}{B * 2} 1"


def test_rounding_half_up():
    # 1 * 5 / 2 = 2.5 -> 3 cells
    out = render([("half", 1), ("max", 2)], width=5)
    assert out == f"half {A}{B * 3} 1\nmax  {A}{B * 5} 2"


def test_rounding_down_below_half():
    out = render([("a", 1), ("b", 3)], width=4)  # 4/3 = 1.33 -> 1
    assert out == f"a {A}{B} 1\nb {A}{B * 4} 3"


def test_rounding_up_above_half():
    out = render([("a", 2), ("b", 3)], width=4)  # 8/3 = 2.67 -> 3
    assert out == f"a {A}{B * 3} 2\nb {A}{B * 4} 3"


def test_tiny_positive_gets_one_cell_zero_gets_none():
    out = render([("big", 1000), ("tiny", 1), ("zero", 0)], width=10)
    assert out == f"big  {A}{B * 10} 1000\ntiny {A}{B} 1\nzero {A} 0"


def test_fractional_small_values_get_one_cell():
    out = render([("big", 100), ("small", 0.5), ("tiny", 0.01)], width=10)
    assert out == f"big   {A}{B * 10} 100\nsmall {A}{B} 0.5\ntiny  {A}{B} 0.01"


def test_all_zero_values():
    out = render({"a": 0, "b": 0.0}, width=5)
    assert out == f"a {A} 0\nb {A} 0"


def test_floats_and_default_format():
    out = render([("p", 0.5), ("q", 2.0)], width=8)
    assert out == f"p {A}{B * 2} 0.5\nq {A}{B * 8} 2"


def test_format_string():
    out = render([("a", 1), ("b", 4)], width=4, fmt="{:.1f}%")
    assert out == f"a {A}{B} 1.0%\nb {A}{B * 4} 4.0%"


def test_format_callable():
    out = render([("a", 3)], width=2, fmt=lambda v: f"<{v * 2}>")
    assert out == f"a {A}{B * 2} <6>"


def test_sort_by_value_descending_stable():
    data = [("c", 2), ("a", 5), ("b", 2), ("d", 5), ("e", 1)]
    out = render(data, width=5, sort="value")
    labels = [line.split(" ")[0] for line in out.split("\n")]
    assert labels == ["a", "d", "c", "b", "e"]
    assert out.split("\n")[0] == f"a {A}{B * 5} 5"
    assert out.split("\n")[-1] == f"e {A}{B} 1"


def test_sort_by_label_stable():
    data = [("pear", 1), ("apple", 2), ("Zed", 3), ("apple", 4)]
    out = render(data, width=4, sort="label")
    assert out.split("\n") == [f"Zed   {A}{B * 3} 3", f"apple {A}{B * 2} 2", f"apple {A}{B * 4} 4", f"pear  {A}{B} 1"]


def test_input_order_kept_without_sort():
    out = render({"z": 1, "a": 3, "m": 2}, width=3)
    assert [line[0] for line in out.split("\n")] == ["z", "a", "m"]


def test_title_and_rule():
    out = render({"a": 1}, width=1, title="Fruit")
    assert out == f"Fruit\n{R * 5}\na {A}{B} 1"


def test_empty_data():
    assert render({}) == ""
    assert render([], title="Nothing") == f"Nothing\n{R * 7}"


def test_generator_input():
    out = render(((k, v) for k, v in [("a", 1), ("b", 2)]), width=2)
    assert out == f"a {A}{B} 1\nb {A}{B * 2} 2"


@pytest.mark.parametrize("value", [-1, -0.5, math.inf, math.nan])
def test_bad_values_value_error(value):
    with pytest.raises(ValueError):
        render([("ok", 1), ("bad", value)])


@pytest.mark.parametrize("value", ["3", None, True, [1]])
def test_non_numbers_type_error(value):
    with pytest.raises(TypeError):
        render([("bad", value)])


@pytest.mark.parametrize("width, exc", [(0, ValueError), (-5, ValueError), (2.0, TypeError), (True, TypeError), ("9", TypeError)])
def test_bad_width(width, exc):
    with pytest.raises(exc):
        render({"a": 1}, width=width)


@pytest.mark.parametrize("sort", ["values", "desc", 1, "Label"])
def test_bad_sort(sort):
    with pytest.raises(ValueError):
        render({"a": 1}, sort=sort)


def test_width_one():
    out = render([("a", 1), ("b", 100)], width=1)
    assert out == f"a {A}{B} 1\nb {A}{B} 100"
