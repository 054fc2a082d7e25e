import pytest

from unit_convert import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("argv, expected", [
    (["1", "mi", "km"], "1.00 mi = 1.61 km"),
    (["1", "km", "m"], "1.00 km = 1000.00 m"),
    (["12", "in", "ft"], "12.00 in = 1.00 ft"),
    (["3", "ft", "yd"], "3.00 ft = 1.00 yd"),
    (["1", "yd", "m", "--precision", "4"], "1.0000 yd = 0.9144 m"),
    (["100", "yd", "ft"], "100.00 yd = 300.00 ft"),
    (["250", "cm", "m"], "250.00 cm = 2.50 m"),
    (["5", "mm", "cm"], "5.00 mm = 0.50 cm"),
    (["1", "lb", "g"], "1.00 lb = 453.59 g"),
    (["16", "oz", "lb"], "16.00 oz = 1.00 lb"),
    (["2", "kg", "lb"], "2.00 kg = 4.41 lb"),
    (["1500", "mg", "g"], "1500.00 mg = 1.50 g"),
    (["90", "min", "h"], "90.00 min = 1.50 h"),
    (["2", "d", "h"], "2.00 d = 48.00 h"),
    (["7200", "s", "h"], "7200.00 s = 2.00 h"),
])
def test_linear_conversions(capsys, argv, expected):
    assert run(capsys, *argv) == (0, expected + "\n", "")


@pytest.mark.parametrize("argv, expected", [
    (["100", "C", "F"], "100.00 C = 212.00 F"),
    (["212", "F", "C", "--precision", "1"], "212.0 F = 100.0 C"),
    (["-40", "C", "F"], "-40.00 C = -40.00 F"),
    (["0", "C", "K"], "0.00 C = 273.15 K"),
    (["300", "K", "C"], "300.00 K = 26.85 C"),
    (["32", "F", "K"], "32.00 F = 273.15 K"),
    (["0", "K", "F"], "0.00 K = -459.67 F"),
    (["98.6", "F", "C", "--precision", "3"], "98.600 F = 37.000 C"),
])
def test_temperatures(capsys, argv, expected):
    assert run(capsys, *argv) == (0, expected + "\n", "")


def test_absolute_zero_is_allowed(capsys):
    assert run(capsys, "-273.15", "C", "K")[1] == "-273.15 C = 0.00 K\n"
    assert run(capsys, "-459.67", "F", "C")[1] == "-459.67 F = -273.15 C\n"
    assert run(capsys, "0", "K", "C")[0] == 0


@pytest.mark.parametrize("argv", [["-273.16", "C", "F"], ["-1", "K", "C"], ["-460", "F", "K"]])
def test_below_absolute_zero_exit_1(capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code == 1 and out == "" and err.strip()


def test_same_unit(capsys):
    assert run(capsys, "4.2", "kg", "kg")[1] == "4.20 kg = 4.20 kg\n"
    assert run(capsys, "10", "F", "F")[1] == "10.00 F = 10.00 F\n"


def test_precision_values(capsys):
    assert run(capsys, "1", "mi", "km", "--precision", "0")[1] == "1 mi = 2 km\n"
    assert run(capsys, "1", "mi", "km", "--precision", "4")[1] == "1.0000 mi = 1.6093 km\n"
    assert run(capsys, "1", "in", "m", "--precision", "10")[1] == "1.0000000000 in = 0.0254000000 m\n"


def test_precision_before_operands(capsys):
    assert run(capsys, "--precision", "1", "3", "h", "min")[1] == "3.0 h = 180.0 min\n"


def test_value_forms(capsys):
    assert run(capsys, "2.5e3", "m", "km")[1] == "2500.00 m = 2.50 km\n"
    assert run(capsys, "-3", "m", "cm")[1] == "-3.00 m = -300.00 cm\n"


def test_negative_zero_is_printed_without_sign(capsys):
    assert run(capsys, "-0.001", "m", "km")[1] == "0.00 m = 0.00 km\n"
    assert run(capsys, "-0.4", "s", "s", "--precision", "0")[1] == "0 s = 0 s\n"
    assert run(capsys, "-0.0", "g", "kg")[1] == "0.00 g = 0.00 kg\n"
    assert run(capsys, "-0.0001", "m", "km", "--precision", "3")[1] == "0.000 m = 0.000 km\n"


def test_small_negative_that_does_not_round_to_zero(capsys):
    assert run(capsys, "-5", "mm", "cm")[1] == "-5.00 mm = -0.50 cm\n"


@pytest.mark.parametrize("argv", [["1", "m", "kg"], ["1", "C", "m"], ["1", "s", "F"], ["1", "lb", "h"]])
def test_different_categories_exit_1(capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code == 1 and out == "" and err.strip()


@pytest.mark.parametrize("argv", [["1", "parsec", "m"], ["1", "m", "furlong"], ["1", "KM", "m"], ["1", "c", "F"]])
def test_unknown_units_exit_1(capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code == 1 and out == "" and err.strip()


@pytest.mark.parametrize("argv", [
    ["abc", "m", "km"],
    ["inf", "m", "km"],
    ["--", "-1e999", "m", "km"],
    ["nan", "C", "F"],
    ["1", "m", "km", "--precision", "11"],
    ["1", "m", "km", "--precision", "-1"],
    ["1", "m", "km", "--precision", "2.5"],
    ["1", "m"],
    ["1", "m", "km", "extra"],
    [],
])
def test_usage_errors_exit_2(capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and err.strip()


def test_help_exit_0(capsys):
    assert main(["--help"]) == 0
    assert "usage" in capsys.readouterr().out.lower()


def test_reverse_directions(capsys):
    assert run(capsys, "1", "lb", "oz")[1] == "1.00 lb = 16.00 oz\n"
    assert run(capsys, "1", "h", "s", "--precision", "0")[1] == "1 h = 3600 s\n"


def test_large_and_tiny_values(capsys):
    assert run(capsys, "1e6", "mm", "km", "--precision", "3")[1] == "1000000.000 mm = 1.000 km\n"
    assert run(capsys, "0.5", "mg", "kg", "--precision", "8")[1] == "0.50000000 mg = 0.00000050 kg\n"
