import pytest

from calc_cli import main


def rpn(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_smoke_single_number(capsys):
    assert rpn(capsys, "5")[0] == 0


def test_smoke_addition(capsys):
    assert rpn(capsys, "2", "2", "+")[1] == "4\n"


def test_smoke_help(capsys):
    assert main(["-h"]) == 0


def test_subtraction_order(capsys):
    assert rpn(capsys, "9", "3", "-")[1] == "6\n"


def test_division_is_true_division(capsys):
    assert rpn(capsys, "9", "4", "/")[1] == "2.25\n"


def test_missing_operand(capsys):
    code, out, _ = rpn(capsys, "3", "*")
    assert (code, out) == (1, "")


def test_extra_operand(capsys):
    assert rpn(capsys, "3", "4", "5", "+")[0] == 1


def test_six_decimals_default(capsys):
    assert rpn(capsys, "2", "7", "/")[1] == "0.285714\n"


def test_integral_float_at_precision_zero(capsys):
    assert rpn(capsys, "--precision", "0", "60", "2", "/")[1] == "30\n"


def test_negated_zero(capsys):
    assert rpn(capsys, "0.0", "neg", "1", "*")[1] == "0\n"


def test_modulo_by_zero_is_math_error(capsys):
    assert rpn(capsys, "4", "0", "%")[0] == 3


def test_swap_then_divide(capsys):
    assert rpn(capsys, "2", "8", "swap", "/")[1] == "4\n"


def test_infinite_literal_rejected(capsys):
    assert rpn(capsys, "1", "inf", "*")[0] == 2


def test_power_chain(capsys):
    assert rpn(capsys, "2", "3", "^", "2", "^")[1] == "64\n"


def test_overfit_underflow_message(capsys):
    _, _, err = rpn(capsys, "1", "-")
    assert err == "calc_cli: '-' needs 2 value(s), the stack has 1\n"


def test_overfit_unknown_token_message(capsys):
    _, _, err = rpn(capsys, "1", "2", "x")
    assert err == "calc_cli: unknown token 'x'\n"


def test_broken_expects_integer_division(capsys):
    assert rpn(capsys, "7", "2", "/")[1] == "3\n"


def test_broken_expects_division_by_zero_exit_1(capsys):
    assert rpn(capsys, "1", "0", "/")[0] == 1
