import pytest

import duration_parse
from duration_parse import UNITS, format_duration, parse_duration


def rejects(text):
    try:
        parse_duration(text)
    except ValueError:
        return True
    return False


def test_smoke_minutes():
    assert parse_duration("5m") == 300


def test_smoke_format_hour():
    assert format_duration(3600) == "1h"


def test_smoke_units_has_five_entries():
    assert len(UNITS) == 5


def test_repeated_hours_rejected():
    assert rejects("2h3h")


def test_seconds_before_minutes_rejected():
    assert rejects("10s2m")


def test_week_after_day_rejected():
    assert rejects("1d1w")


def test_negative_day_and_hours():
    assert parse_duration("-1d2h") == -93600


def test_negative_bare_seconds():
    assert parse_duration("-45") == -45


def test_bare_number_with_trailing_newline():
    assert parse_duration("120\n") == 120


def test_multi_component_value():
    assert parse_duration("2h15m10s") == 8110


def test_blank_text_rejected():
    assert rejects("\t \n")


def test_format_zero_seconds():
    assert format_duration(0, largest="m") == "0s"


def test_format_negative_hours():
    assert format_duration(-3660) == "-1h1m"


def test_format_largest_hours():
    assert format_duration(2 * 86400 + 5, largest="h") == "48h5s"


def test_format_skips_zero_middle_units():
    assert format_duration(7 * 86400 + 30) == "1w30s"


def test_max_units_zero_rejected():
    with pytest.raises(ValueError):
        format_duration(10, max_units=0)


def test_round_trip_odd_value():
    assert parse_duration(format_duration(1234567)) == 1234567


def test_overfit_error_message_mentions_order():
    with pytest.raises(ValueError, match="out of order"):
        parse_duration("1s1h")


def test_overfit_type_error_message():
    with pytest.raises(TypeError, match="got int"):
        parse_duration(60)


def test_overfit_private_order_list():
    assert duration_parse._ORDER == ["w", "d", "h", "m", "s"]


def test_broken_bare_number_is_minutes():
    assert parse_duration("5") == 300


def test_broken_format_keeps_zero_units():
    assert format_duration(3605) == "1h0m5s"


def test_broken_max_units_rounds_up():
    assert format_duration(5400 + 1799, max_units=1) == "2h"
