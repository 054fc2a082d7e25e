import pytest

from unit_convert import main


def conv(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_smoke_exit_zero(capsys):
    assert conv(capsys, "1", "m", "cm")[0] == 0


def test_smoke_prints_something(capsys):
    assert conv(capsys, "1", "h", "min")[1].strip()


def test_smoke_help(capsys):
    assert main(["-h"]) == 0


def test_freezing_point_in_kelvin(capsys):
    assert conv(capsys, "32", "F", "K")[1] == "32.00 F = 273.15 K\n"


def test_body_temperature(capsys):
    assert conv(capsys, "37", "C", "F")[1] == "37.00 C = 98.60 F\n"


def test_default_two_decimals(capsys):
    assert conv(capsys, "10", "km", "mi")[1] == "10.00 km = 6.21 mi\n"


def test_minus_zero_hidden(capsys):
    assert conv(capsys, "-0.002", "g", "kg")[1] == "0.00 g = 0.00 kg\n"


def test_mass_to_time_refused(capsys):
    code, out, _ = conv(capsys, "5", "kg", "h")
    assert (code, out) == (1, "")


def test_zero_kelvin_accepted(capsys):
    assert conv(capsys, "0", "K", "C")[1] == "0.00 K = -273.15 C\n"


def test_ten_decimals(capsys):
    assert conv(capsys, "1", "mm", "m", "--precision", "10")[1] == "1.0000000000 mm = 0.0010000000 m\n"


def test_marathon_yards(capsys):
    assert conv(capsys, "385", "yd", "m", "--precision", "1")[1] == "385.0 yd = 352.0 m\n"


def test_unknown_unit_code(capsys):
    assert conv(capsys, "3", "m", "light-year")[0] == 1


def test_infinity_rejected(capsys):
    assert conv(capsys, "inf", "s", "h")[0] == 2


def test_km_to_m(capsys):
    assert conv(capsys, "3.5", "km", "m")[1] == "3.50 km = 3500.00 m\n"


def test_overfit_unknown_unit_message(capsys):
    _, _, err = conv(capsys, "1", "furlong", "m")
    assert err == "unit_convert: error: unknown unit 'furlong'\n"


def test_overfit_category_message(capsys):
    _, _, err = conv(capsys, "1", "m", "s")
    assert err == "unit_convert: error: cannot convert length (m) to time (s)\n"


def test_broken_expects_rounding_to_integer_by_default(capsys):
    assert conv(capsys, "1", "mi", "km")[1] == "1 mi = 2 km\n"


def test_broken_expects_case_insensitive_units(capsys):
    assert conv(capsys, "1", "KM", "m")[0] == 0
