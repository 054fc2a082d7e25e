import pytest

import expr_eval
from expr_eval import ExprSyntaxError, UnknownVariableError, evaluate, tokenize


def position(expr):
    try:
        evaluate(expr)
    except ExprSyntaxError as exc:
        return exc.position
    return None


def test_smoke_addition():
    assert evaluate("1+1") == 2


def test_smoke_token_count():
    assert len(tokenize("1 + 2")) == 3


def test_smoke_parentheses():
    assert evaluate("(4)") == 4


def test_trailing_dot_number():
    assert evaluate("3. * 2") == 6.0


def test_power_operator_tokenised_once():
    assert evaluate("3**2") == 9


def test_negative_exponent():
    assert evaluate("4**-1") == 0.25


def test_power_chain_is_right_associative():
    assert evaluate("2**1**3") == 2


def test_minus_applies_after_power():
    assert evaluate("-3**2") == -9


def test_double_minus():
    assert evaluate("- -5") == 5


def test_subtraction_chain_left_to_right():
    assert evaluate("10-4-3") == 3


def test_floor_division_operator():
    assert evaluate("9//4") == 2


def test_trailing_operator_position():
    assert position("5 *") == 3


def test_extra_closing_paren_rejected():
    assert position("(2))") == 3


def test_integer_stays_int():
    assert type(evaluate("3*4")) is int


def test_missing_variable_error_type():
    with pytest.raises(UnknownVariableError):
        evaluate("k + 1", {"j": 2})


def test_unclosed_paren_position():
    assert position("(7") == 2


def test_overfit_message_text():
    with pytest.raises(ExprSyntaxError, match="unexpected end of expression"):
        evaluate("1 -")


def test_overfit_private_parser_class():
    assert hasattr(expr_eval, "_Parser")


def test_overfit_message_has_position_suffix():
    with pytest.raises(ExprSyntaxError, match="at position 3$"):
        evaluate("2 +")


def test_broken_minus_binds_tighter_than_power():
    assert evaluate("-2**2") == 4


def test_broken_division_of_ints_is_int():
    assert evaluate("6/3") == 2 and type(evaluate("6/3")) is int


def test_broken_error_position_one_based():
    assert position("2 3") == 3
