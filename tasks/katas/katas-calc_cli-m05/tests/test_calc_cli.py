import pytest

from calc_cli import main


def calc(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("tokens, expected", [
    (["3", "4", "+", "2", "*"], "14"),
    (["10", "4", "-"], "6"),
    (["4", "10", "-"], "-6"),
    (["7", "2", "/"], "3.5"),
    (["1", "3", "/"], "0.333333"),
    (["6", "3", "/"], "2"),
    (["2", "10", "^"], "1024"),
    (["2", "-1", "^"], "0.5"),
    (["-7", "2", "%"], "1"),
    (["7", "-2", "%"], "-1"),
    (["7.5", "2", "%"], "1.5"),
    (["2.5", "4", "*"], "10"),
    (["0.1", "0.2", "+"], "0.3"),
    (["1e3", "1", "+"], "1001"),
    (["5", "neg"], "-5"),
    (["3", "dup", "*"], "9"),
    (["1", "2", "swap", "-"], "1"),
    (["8", "2", "swap", "/"], "0.25"),
    (["42"], "42"),
    (["-0.5"], "-0.5"),
    (["2", "3", "4", "*", "+", "5", "-"], "9"),
])
def test_expressions(capsys, tokens, expected):
    assert calc(capsys, *tokens) == (0, expected + "\n", "")


def test_big_ints_stay_exact(capsys):
    assert calc(capsys, "9007199254740993", "1", "+")[1] == "9007199254740994\n"
    assert calc(capsys, "2", "64", "^")[1] == "18446744073709551616\n"


def test_int_division_result_is_float_formatted(capsys):
    assert calc(capsys, "10", "4", "/")[1] == "2.5\n"
    assert calc(capsys, "2", "3", "/")[1] == "0.666667\n"


def test_precision(capsys):
    assert calc(capsys, "--precision", "2", "2", "3", "/")[1] == "0.67\n"
    assert calc(capsys, "--precision", "0", "7", "2", "/")[1] == "4\n"
    assert calc(capsys, "--precision", "0", "10", "1", "/")[1] == "10\n"
    assert calc(capsys, "--precision", "12", "1", "3", "/")[1] == "0.333333333333\n"
    assert calc(capsys, "1", "8", "/", "--precision", "2")[1] == "0.12\n"


def test_precision_does_not_touch_ints(capsys):
    assert calc(capsys, "--precision", "0", "100", "20", "+")[1] == "120\n"
    assert calc(capsys, "--precision", "3", "1000")[1] == "1000\n"


def test_trailing_zeros_removed_but_not_integer_zeros(capsys):
    assert calc(capsys, "200", "2", "/")[1] == "100\n"
    assert calc(capsys, "10.5", "0.5", "+")[1] == "11\n"
    assert calc(capsys, "1.05", "1", "+")[1] == "2.05\n"


def test_negative_zero(capsys):
    assert calc(capsys, "0.0", "neg")[1] == "0\n"
    assert calc(capsys, "-1", "10000000", "/")[1] == "0\n"
    assert calc(capsys, "--precision", "2", "-0.001")[1] == "0\n"
    assert calc(capsys, "--precision", "0", "-0.4")[1] == "0\n"


@pytest.mark.parametrize("tokens", [["+"], ["1", "+"], ["neg"], ["dup"], ["1", "swap"], ["1", "2", "+", "*"]])
def test_underflow_exit_1(capsys, tokens):
    code, out, err = calc(capsys, *tokens)
    assert code == 1 and out == "" and err.strip()


@pytest.mark.parametrize("tokens", [["1", "2"], ["1", "2", "3", "+"], ["5", "dup"]])
def test_leftover_values_exit_1(capsys, tokens):
    code, out, err = calc(capsys, *tokens)
    assert code == 1 and out == "" and err.strip()


@pytest.mark.parametrize("argv", [
    [],
    ["1", "2", "plus"],
    ["x"],
    ["nan"],
    ["inf", "1", "+"],
    ["--", "-inf", "1", "+"],
    ["--precision", "13", "1"],
    ["--precision", "-1", "1"],
    ["--precision", "two", "1"],
    ["--bogus", "1"],
])
def test_usage_errors_exit_2(capsys, argv):
    code, out, err = calc(capsys, *argv)
    assert code == 2 and out == "" and err.strip()


@pytest.mark.parametrize("tokens", [
    ["1", "0", "/"],
    ["1.5", "0.0", "/"],
    ["5", "0", "%"],
    ["0", "-1", "^"],
    ["10.0", "400", "^"],
    ["1e308", "10", "*"],
    ["-8", "0.5", "^"],
])
def test_math_errors_exit_3(capsys, tokens):
    code, out, err = calc(capsys, *tokens)
    assert code == 3 and out == "" and err.strip()


def test_first_problem_decides(capsys):
    assert calc(capsys, "1", "0", "/", "foo")[0] == 3
    assert calc(capsys, "foo", "1", "0", "/")[0] == 2
    assert calc(capsys, "+", "foo")[0] == 1
    assert calc(capsys, "1", "0", "/", "+")[0] == 3


def test_double_dash_allows_any_negative_number(capsys):
    assert calc(capsys, "--", "-1e2", "50", "+")[1] == "-50\n"


def test_help(capsys):
    assert main(["--help"]) == 0
    assert "usage" in capsys.readouterr().out.lower()


def test_stack_words_combined(capsys):
    assert calc(capsys, "2", "dup", "dup", "*", "*")[1] == "8\n"
    assert calc(capsys, "1", "2", "3", "swap", "-", "+")[1] == "2\n"
    assert calc(capsys, "4", "neg", "neg")[1] == "4\n"


def test_float_modulo_and_power(capsys):
    assert calc(capsys, "-7.5", "2", "%")[1] == "0.5\n"
    assert calc(capsys, "2", "0.5", "^")[1] == "1.414214\n"
    assert calc(capsys, "4", "0.5", "^")[1] == "2\n"
