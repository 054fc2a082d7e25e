import pytest

from table_render import render_table


def row_lines(text):
    return text.split("\n")


def test_smoke_returns_string():
    assert isinstance(render_table(["h"], [["v"]]), str)


def test_smoke_line_count():
    assert len(row_lines(render_table(["h"], [["a"], ["b"]]))) == 6


def test_smoke_header_present():
    assert "| city |" in render_table(["city"], [["rome"]])


def test_long_header_sets_width():
    out = render_table(["identifier"], [["7"]])
    assert row_lines(out)[3] == "| 7          |"


def test_ellipsis_keeps_max_width():
    out = render_table(["w"], [["abcdefgh"]], max_width=4)
    assert row_lines(out)[3] == "| abc… |"


def test_centre_with_three_spaces_of_padding():
    out = render_table(["level"], [["hi"], ["low"]], align="c")
    assert row_lines(out)[3] == "|  hi   |"
    assert row_lines(out)[4] == "|  low  |"


def test_right_alignment_numbers():
    out = render_table(["price"], [[5], [1999]], align="r")
    assert row_lines(out)[3] == "|     5 |"


def test_header_rule_uses_equals():
    assert row_lines(render_table(["x"], [["y"]]))[2] == "+===+"


def test_tab_in_cell():
    out = render_table(["t"], [["1\t2"]])
    assert row_lines(out)[3] == "| 1 2 |"


def test_none_cell_blank():
    out = render_table(["a", "b"], [[None, "z"]])
    assert row_lines(out)[3] == "|   | z |"


def test_short_row_value_error():
    with pytest.raises(ValueError):
        render_table(["a", "b", "c"], [["1", "2"]])


def test_align_too_short():
    with pytest.raises(ValueError):
        render_table(["a", "b"], [["1", "2"]], align="r")


def test_border_width():
    assert row_lines(render_table(["abc"], [["d"]]))[0] == "+-----+"


def test_error_message_for_row():
    with pytest.raises(ValueError, match="row 0 has 1 cells, expected 2"):
        render_table(["a", "b"], [["x"]])


def test_non_string_header_is_stringified():
    out = render_table([2024], [["x"]])
    assert row_lines(out)[1] == "| 2024 |"


def test_max_width_error_message():
    with pytest.raises(ValueError, match="max_width must be an int >= 1"):
        render_table(["a"], [["b"]], max_width=0)


def test_align_accepts_list_of_letters():
    out = render_table(["a", "b"], [["1", "2"]], align="lr")
    assert row_lines(out)[3] == "| 1 | 2 |"
    render_table(["a", "b"], [["1", "2"]], align=tuple("lr"))


def test_ends_with_newline():
    assert render_table(["a"], [["b"]]).endswith("+\n")


def test_truncation_without_ellipsis():
    out = render_table(["w"], [["abcdefgh"]], max_width=3)
    assert row_lines(out)[3] == "| abc |"


def test_empty_rows_layout():
    assert render_table(["e"], []).count("\n") == 3


def test_scenario_report_table():
    out = render_table(
        ["product", "n", "note"],
        [["teapot", 3, None], ["cup\tset", 12, "fragile, handle with care"], ["saucer", 0, "ok"]],
        align="rcl",
        max_width=9,
    )
    assert out == "\n".join([
        "+---------+----+-----------+",
        "| product | n  | note      |",
        "+=========+====+===========+",
        "|  teapot | 3  |           |",
        "| cup set | 12 | fragile,… |",
        "|  saucer | 0  | ok        |",
        "+---------+----+-----------+",
    ])
    with pytest.raises(ValueError):
        render_table(["a", "b"], [["1"]])
    with pytest.raises(ValueError):
        render_table(["a", "b"], [["1", "2"]], align="l")
