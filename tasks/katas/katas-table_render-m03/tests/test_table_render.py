import pytest

from table_render import render_table


def lines(*parts):
    return "\n".join(parts)


def test_spec_example():
    out = render_table(["name", "qty"], [["apple", 3], ["kiwi", None]], align="lr")
    assert out == lines(
        "+-------+-----+",
        "| name  | qty |",
        "+=======+=====+",
        "| apple |   3 |",
        "| kiwi  |     |",
        "+-------+-----+",
    )


def test_default_left_alignment_and_header_width():
    out = render_table(["description", "n"], [["tea", 1], ["biscuits", 22]])
    assert out == lines(
        "+-------------+----+",
        "| description | n  |",
        "+=============+====+",
        "| tea         | 1  |",
        "| biscuits    | 22 |",
        "+-------------+----+",
    )


def test_width_uses_every_row():
    out = render_table(["k"], [["a"], ["bb"], ["cccc"]])
    assert out.splitlines()[0] == "+------+"
    assert out.splitlines()[-2] == "| cccc |"


def test_no_rows():
    assert render_table(["only"], []) == lines("+------+", "| only |", "+======+", "+------+")


def test_no_trailing_newline():
    assert not render_table(["a"], [["b"]]).endswith("\n")


def test_right_alignment_with_small_and_large_gaps():
    out = render_table(["qty"], [[7], [12], [120]], align="r")
    assert out.splitlines()[3:6] == ["|   7 |", "|  12 |", "| 120 |"]


@pytest.mark.parametrize("cell,expected", [
    ("ok", "|  ok   |"),      # gap 3: 1 left, 2 right
    ("abc", "|  abc  |"),     # gap 2
    ("abcd", "| abcd  |"),    # gap 1: 0 left, 1 right
    ("state", "| state |"),
])
def test_center_puts_odd_space_right(cell, expected):
    out = render_table(["state"], [[cell]], align="c")
    assert out.splitlines()[3] == expected


def test_center_header_and_wide_gap():
    out = render_table(["id", "x"], [["1234567", "y"]], align="cc")
    assert out.splitlines()[1] == "|   id    | x |"


def test_mixed_alignment_per_column():
    out = render_table(["a", "b", "c"], [["xx", "yy", "zz"], ["x", "y", "z"]], align="lcr")
    assert out.splitlines()[1] == "| a  | b  |  c |"
    assert out.splitlines()[4] == "| x  | y  |  z |"


def test_cells_are_stringified_and_none_is_empty():
    out = render_table(["v"], [[None], [0], [False], [1.5], [""]])
    assert out.splitlines()[3:8] == ["|       |", "| 0     |", "| False |", "| 1.5   |", "|       |"]


def test_whitespace_characters_become_single_spaces():
    out = render_table(["k"], [["a\tb"], ["c\nd"], ["e\r\nf"]])
    assert out.splitlines()[3:6] == ["| a b  |", "| c d  |", "| e  f |"]


def test_truncation_with_ellipsis():
    out = render_table(["item"], [["pineapple"], ["fig"], ["melon"]], max_width=5)
    assert out == lines(
        "+-------+",
        "| item  |",
        "+=======+",
        "| pine… |",
        "| fig   |",
        "| melon |",
        "+-------+",
    )


def test_truncation_applies_to_headers_and_width_one():
    out = render_table(["longheader", "b"], [["x", "yy"]], max_width=1)
    assert out == lines(
        "+---+---+",
        "| … | b |",
        "+===+===+",
        "| x | … |",
        "+---+---+",
    )


def test_truncation_width_two():
    out = render_table(["abc"], [["de"]], max_width=2)
    assert out.splitlines()[1:4] == ["| a… |", "+====+", "| de |"]


@pytest.mark.parametrize("bad", [0, -1, 2.0, "3", True])
def test_bad_max_width(bad):
    with pytest.raises(ValueError):
        render_table(["a"], [["b"]], max_width=bad)


@pytest.mark.parametrize("bad", ["l", "lrc", "lx", "LR", "", ["l", "r"]])
def test_bad_align(bad):
    with pytest.raises(ValueError):
        render_table(["a", "b"], [["1", "2"]], align=bad)


@pytest.mark.parametrize("row", [["only"], ["1", "2", "3"], []])
def test_rows_must_match_header_count(row):
    with pytest.raises(ValueError):
        render_table(["a", "b"], [["ok", "ok"], row])


def test_empty_headers_rejected():
    with pytest.raises(ValueError):
        render_table([], [])


def test_border_lengths_match_lines():
    out = render_table(["ab", "c"], [["cd", "efgh"]])
    rendered = out.splitlines()
    assert rendered[0] == "+----+------+"
    assert all(len(line) == len(rendered[0]) for line in rendered)
    assert rendered[2] == "+====+======+"
