import pytest

from duration_parse import UNITS, format_duration, parse_duration


def test_units_table():
    assert list(UNITS.items()) == [("w", 604800), ("d", 86400), ("h", 3600), ("m", 60), ("s", 1)]


@pytest.mark.parametrize("text, seconds", [
    ("1h30m", 5400), ("90s", 90), ("2d 4h", 187200), ("1w2d3h4m5s", 788645),
    ("45m", 2700), ("3w", 1814400), ("1d1s", 86401),
])
def test_parse_components(text, seconds):
    assert parse_duration(text) == seconds


def test_parse_bare_integer_is_seconds():
    assert parse_duration("90") == 90
    assert parse_duration("0") == 0
    assert parse_duration("-15") == -15


def test_parse_leading_zeros():
    assert parse_duration("007s") == 7
    assert parse_duration("01h05m") == 3900


def test_parse_sign():
    assert parse_duration("-1h30m") == -5400
    assert parse_duration("+2m") == 120
    assert parse_duration("-0s") == 0


def test_parse_whitespace_handling():
    assert parse_duration("  1h  30m\t") == 5400
    assert parse_duration("1h\n5s") == 3605
    assert parse_duration(" 90 ") == 90
    assert parse_duration("\t-2m\n") == -120


@pytest.mark.parametrize("text", ["30m1h", "1m1m", "1s1m", "2d1w", "1h1h30m"])
def test_parse_units_out_of_order(text):
    with pytest.raises(ValueError):
        parse_duration(text)


@pytest.mark.parametrize("text", [
    "", "   ", "-", "+", "5x", "1H", "1h30", "h", "1.5h", "1h-5m", "1 0s", "10 s", "- 5s",
    "1h+5m", "s5", "1hh", "--5s", "٣s", "٣", "²",
])
def test_parse_invalid(text):
    with pytest.raises(ValueError):
        parse_duration(text)


@pytest.mark.parametrize("value", [None, 5, 1.5, b"1h"])
def test_parse_type_error(value):
    with pytest.raises(TypeError):
        parse_duration(value)


@pytest.mark.parametrize("seconds, text", [
    (5400, "1h30m"), (694861, "1w1d1h1m1s"), (86400, "1d"), (59, "59s"), (60, "1m"),
    (3601, "1h1s"), (1209600, "2w"),
])
def test_format_basic(seconds, text):
    assert format_duration(seconds) == text


def test_format_zero_and_negative():
    assert format_duration(0) == "0s"
    assert format_duration(-90) == "-1m30s"
    assert format_duration(-7200, largest="m") == "-120m"
    assert format_duration(0, largest="h", max_units=1) == "0s"


def test_format_largest_unit():
    assert format_duration(7200, largest="m") == "120m"
    assert format_duration(694861, largest="d") == "8d1h1m1s"
    assert format_duration(3725, largest="s") == "3725s"


def test_format_max_units_truncates():
    assert format_duration(5430, max_units=1) == "1h"
    assert format_duration(-5430, max_units=2) == "-1h30m"
    assert format_duration(90061, max_units=2) == "1d1h"
    assert format_duration(86401, max_units=1) == "1d"
    assert format_duration(86401, max_units=2) == "1d1s"
    assert format_duration(61, max_units=5) == "1m1s"


@pytest.mark.parametrize("kwargs", [
    {"largest": "y"}, {"largest": "H"}, {"max_units": 0}, {"max_units": -1},
    {"max_units": True}, {"max_units": 1.0},
])
def test_format_bad_options(kwargs):
    with pytest.raises(ValueError):
        format_duration(100, **kwargs)


@pytest.mark.parametrize("value", [1.0, "60", True, None])
def test_format_type_error(value):
    with pytest.raises(TypeError):
        format_duration(value)


def test_round_trip():
    for n in [0, 1, 59, 60, 61, 3599, 3600, 86399, 604799, 604800, 987654321, -1, -604801]:
        assert parse_duration(format_duration(n)) == n
