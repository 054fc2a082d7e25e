import pytest

from csv_dialect import CSVError, Dialect, format_row, format_rows, parse

ESC = Dialect(escapechar="\\")


def test_simple_records():
    assert parse("a,b\nc,d") == [["a", "b"], ["c", "d"]]


def test_empty_text_and_trailing_break():
    assert parse("") == []
    assert parse("a,b\n") == [["a", "b"]]
    assert parse("a\r\nb\r\n") == [["a"], ["b"]]


def test_empty_lines_are_single_empty_field_records():
    assert parse("a\n\nb") == [["a"], [""], ["b"]]
    assert parse("\n") == [[""]]
    assert parse("a\n\n") == [["a"], [""]]


def test_empty_fields_and_whitespace_kept():
    assert parse("a,,b") == [["a", "", "b"]]
    assert parse("a,") == [["a", ""]]
    assert parse(" x , y ") == [[" x ", " y "]]


def test_lone_carriage_return_is_text():
    assert parse("a\rb,c") == [["a\rb", "c"]]


def test_quoted_field_with_delimiter_and_newline():
    assert parse('"a,b","c\nd"\ne') == [["a,b", "c\nd"], ["e"]]


def test_doubled_quote_inside_quoted_field():
    assert parse('"say ""hi""",x') == [['say "hi"', "x"]]
    assert parse('""""') == [['"']]


def test_quoted_empty_field():
    assert parse('"",a') == [["", "a"]]


def test_quote_inside_unquoted_field_is_literal():
    assert parse('ab"c,d"') == [['ab"c', 'd"']]


def test_quoted_field_followed_by_crlf():
    assert parse('"a"\r\n"b"') == [["a"], ["b"]]


def test_text_after_closing_quote_is_error():
    with pytest.raises(CSVError) as info:
        parse('ok\n"ab"c,d')
    assert info.value.line == 2
    assert isinstance(info.value, ValueError)


def test_unclosed_quote_reports_start_line():
    with pytest.raises(CSVError) as info:
        parse('x\ny,"open\nstill\nopen')
    assert info.value.line == 2


def test_custom_delimiter_and_quotechar():
    d = Dialect(delimiter=";", quotechar="'")
    assert parse("a;'b;c';'it''s'", d) == [["a", "b;c", "it's"]]
    assert parse('a,"b";c', d) == [['a,"b"', "c"]]


def test_escape_character_in_unquoted_field():
    assert parse(r"a\,b,c\\d", ESC) == [["a,b", "c\\d"]]


def test_escaped_quote_at_field_start_is_not_quoting():
    assert parse('\\"x,y', ESC) == [['"x', "y"]]


def test_escape_inside_quoted_field_and_escaped_newline():
    assert parse('"a\\"b",c\\\nd', ESC) == [['a"b', "c\nd"]]


def test_escape_at_end_is_error_with_line():
    with pytest.raises(CSVError) as info:
        parse("a\nb\\", ESC)
    assert info.value.line == 2


def test_backslash_is_plain_without_escapechar():
    assert parse("a\\,b") == [["a\\", "b"]]


@pytest.mark.parametrize("kwargs", [
    {"delimiter": ""}, {"delimiter": ";;"}, {"quotechar": ","}, {"delimiter": "\n"},
    {"quotechar": "\r"}, {"escapechar": '"'}, {"escapechar": ","}, {"escapechar": "ab"},
])
def test_invalid_dialects(kwargs):
    with pytest.raises(ValueError):
        Dialect(**kwargs)


def test_dialect_equality():
    assert Dialect(";") == Dialect(delimiter=";")
    assert Dialect() != Dialect(escapechar="\\")


def test_format_plain_and_quoted_fields():
    assert format_row(["a", "b c", "d,e", 'f"g', "h\ni"]) == 'a,b c,"d,e","f""g","h\ni"'


def test_format_carriage_return_is_quoted():
    assert format_row(["a\rb", "c"]) == '"a\rb",c'


def test_format_empty_fields():
    assert format_row([""]) == '""'
    assert format_row(["", ""]) == ","
    assert format_row(["a", ""]) == "a,"


def test_format_with_custom_dialect_and_escape():
    d = Dialect(delimiter="|", quotechar="'", escapechar="\\")
    assert format_row(["a\\b", "x|y", "it's", 'q"'], d) == "a\\\\b|'x|y'|'it''s'|q\""
    assert format_row(["a,b"], d) == "a,b"


def test_format_errors():
    with pytest.raises(ValueError):
        format_row([])
    with pytest.raises(TypeError):
        format_row(["a", 1])


def test_format_rows_line_breaks():
    assert format_rows([]) == ""
    assert format_rows([["a", "b"], [""]]) == 'a,b\n""\n'


def test_round_trip():
    d = Dialect(delimiter=";", escapechar="\\")
    rows = [["", "x"], [""], ['"q"', "a;b", "c\\d", "line\nbreak\r"], ["end"]]
    assert parse(format_rows(rows, d), d) == rows


def test_single_character_text():
    assert parse("x") == [["x"]]
    assert parse(",") == [["", ""]]


def test_lone_carriage_return_after_closing_quote_is_error():
    with pytest.raises(CSVError):
        parse('"a"\rb')


def test_error_line_counts_breaks_inside_quoted_field():
    with pytest.raises(CSVError) as info:
        parse('"a\nb\nc"x')
    assert info.value.line == 3


def test_other_escape_character():
    d = Dialect(escapechar="~")
    assert parse("a~,b,~~", d) == [["a,b", "~"]]
    with pytest.raises(CSVError):
        parse("ab~", d)
    assert format_row(["x~y~z", "\\"], d) == "x~~y~~z,\\"


def test_format_whitespace_field_not_quoted():
    assert format_row([" "]) == " "
    assert format_row(["a b "]) == "a b "
