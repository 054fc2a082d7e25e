import pytest

from csv_dialect import CSVError, Dialect, format_row, format_rows, parse

SEMI = Dialect(delimiter=";")
BACKSLASH = Dialect(escapechar="\\")


def error_line(text, dialect=Dialect()):
    try:
        parse(text, dialect)
    except CSVError as exc:
        return exc.line
    return None


def test_smoke_two_fields():
    assert parse("x,y") == [["x", "y"]]


def test_smoke_format_plain_row():
    assert format_row(["p", "q"]) == "p,q"


def test_smoke_semicolon_dialect():
    assert parse("1;2;3", SEMI) == [["1", "2", "3"]]


def test_nothing_in_nothing_out():
    assert parse("") == []


def test_unclosed_quote_line_is_opening_line():
    assert error_line('a\n"b\nc\nd') == 2


def test_unclosed_quote_on_first_line():
    assert error_line('"never\nclosed\n') == 1


def test_quoted_last_field_at_end_of_text():
    assert parse('x,"y"') == [["x", "y"]]


def test_crlf_after_quoted_field():
    assert parse('"k","v"\r\nz') == [["k", "v"], ["z"]]


def test_final_newline_no_extra_record():
    assert parse("r1\nr2\n") == [["r1"], ["r2"]]


def test_crlf_records():
    assert parse("p,q\r\nr,s") == [["p", "q"], ["r", "s"]]


def test_stray_quote_in_middle_is_text():
    assert parse('5" screen,ok') == [['5" screen', "ok"]]


def test_trailing_escape_raises_csv_error():
    assert error_line("abc\\", BACKSLASH) == 1


def test_format_quotes_carriage_return():
    assert format_row(["x\r", "y"]) == '"x\r",y'


def test_format_empty_middle_field_bare():
    assert format_row(["a", "", "b"]) == "a,,b"


def test_format_doubles_escape_char():
    assert format_row(["C:\\dir"], BACKSLASH) == "C:\\\\dir"


def test_escape_equal_to_quote_rejected():
    with pytest.raises(ValueError):
        Dialect(escapechar='"')


def test_round_trip_with_backslash_escape():
    rows = [["a\\b", "c"], ["\\", ""]]
    assert parse(format_rows(rows, BACKSLASH), BACKSLASH) == rows


def test_overfit_error_message_mentions_line():
    with pytest.raises(CSVError, match=r"^line 1: "):
        parse('"x"y')


def test_overfit_dialect_repr():
    assert repr(Dialect()) == "Dialect(delimiter=',', quotechar='\"', escapechar=None)"


def test_overfit_generator_rows_rejected():
    with pytest.raises(TypeError):
        format_row(iter(["a", "b"]))


def test_broken_trailing_newline_adds_record():
    assert parse("a\n") == [["a"], [""]]


def test_broken_empty_field_always_quoted():
    assert format_row(["", "x"]) == '"",x'


def test_broken_whitespace_is_stripped():
    assert parse(" a , b ") == [["a", "b"]]
