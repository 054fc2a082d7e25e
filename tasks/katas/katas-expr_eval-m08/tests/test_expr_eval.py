import pytest

from expr_eval import ExprSyntaxError, Token, UnknownVariableError, evaluate, tokenize


def syntax_position(expr, variables=None):
    with pytest.raises(ExprSyntaxError) as info:
        evaluate(expr, variables)
    assert isinstance(info.value, ValueError)
    return info.value.position


def test_tokenize_kinds_and_positions():
    assert tokenize(" a1 **(2.5)//x_") == [
        Token("NAME", "a1", 1), Token("OP", "**", 4), Token("LPAREN", "(", 6),
        Token("NUM", "2.5", 7), Token("RPAREN", ")", 10), Token("OP", "//", 11),
        Token("NAME", "x_", 13),
    ]


def test_tokenize_numbers():
    assert [t.text for t in tokenize("12 3.5 4. .5 1.2.3")] == ["12", "3.5", "4.", ".5", "1.2", ".3"]
    assert all(t.kind == "NUM" for t in tokenize("12 3.5 4. .5"))


def test_tokenize_operator_longest_match():
    assert [t.text for t in tokenize("2***3")] == ["2", "**", "*", "3"]
    assert [t.text for t in tokenize("8///2")] == ["8", "//", "/", "2"]


def test_tokenize_token_is_named_tuple():
    tok = tokenize("7")[0]
    assert (tok.kind, tok.text, tok.pos) == ("NUM", "7", 0)
    assert tok == ("NUM", "7", 0)


def test_tokenize_bad_character_and_type():
    with pytest.raises(ExprSyntaxError) as info:
        tokenize("1 + ?")
    assert info.value.position == 4
    with pytest.raises(TypeError):
        tokenize(5)
    with pytest.raises(TypeError):
        evaluate(None)


@pytest.mark.parametrize("expr, value", [
    ("1+2*3", 7), ("(1+2)*3", 9), ("7-2-1", 4), ("2*3-4/2", 4.0), ("100/10/5", 2.0),
    ("2**3**2", 512), ("-2**2", -4), ("(-2)**2", 4), ("2**-1", 0.5), ("--3", 3),
    ("-+-2", 2), ("2*-3", -6), ("-2*3", -6), ("2**-1*4", 2.0), ("1-2**2*3", -11),
    ("2**3*2", 16), ("7//2", 3), ("-7//2", -4), ("-7%3", 2), ("7%-3", -2), ("2+12%5*3", 8), ("+5", 5),
])
def test_precedence_and_associativity(expr, value):
    assert evaluate(expr) == value


def test_result_types():
    assert type(evaluate("6/3")) is float
    assert type(evaluate("7//2")) is int
    assert type(evaluate("2**10")) is int
    assert type(evaluate("4.")) is float
    assert evaluate(".5+1") == 1.5


def test_whitespace_ignored():
    assert evaluate("  ( 1 +\t2 )\n* 3 ") == 9


def test_variables():
    assert evaluate("a*b+c", {"a": 2, "b": 3, "c": 1}) == 7
    assert evaluate("-x**2", {"x": 3}) == -9
    assert evaluate("_tmp2 / 4", {"_tmp2": 2}) == 0.5


def test_unknown_variable():
    with pytest.raises(UnknownVariableError) as info:
        evaluate("a + b", {"a": 1})
    assert info.value.name == "b"
    assert isinstance(info.value, KeyError)
    with pytest.raises(UnknownVariableError):
        evaluate("q")


@pytest.mark.parametrize("expr, position", [
    ("", 0), ("   ", 3), ("2 +", 3), ("(1", 2), ("(1 2", 3), ("2 3", 2), ("(1))", 3),
    ("()", 1), ("+", 1), ("2 + * 3", 4), ("1.2.3", 3), ("2***3", 3), ("1e5", 1), ("x (1)", 2),
    ("(1+2", 4), (")", 0), ("3 *", 3), ("2**", 3),
])
def test_syntax_error_positions(expr, position):
    assert syntax_position(expr) == position


def test_character_error_before_grammar_error():
    assert syntax_position("2 ) $") == 4


def test_grammar_error_before_evaluation():
    assert syntax_position("1/0 +") == 5
    assert syntax_position("y (") == 2


def test_evaluation_left_to_right():
    with pytest.raises(UnknownVariableError):
        evaluate("x + 1/0")
    with pytest.raises(ZeroDivisionError):
        evaluate("1/0 + x")


@pytest.mark.parametrize("expr", ["1/0", "5//0", "5%0", "0**-1", "1/(2-2)"])
def test_zero_division(expr):
    with pytest.raises(ZeroDivisionError):
        evaluate(expr)


def test_tokenize_empty_and_blank():
    assert tokenize("") == []
    assert tokenize(" \t\n") == []


def test_names_may_contain_digits_but_not_start_with_them():
    assert [t.kind for t in tokenize("x2 2x")] == ["NAME", "NUM", "NAME"]
    assert syntax_position("2x", {"x": 1}) == 1


def test_variables_mapping_not_modified():
    env = {"a": 1}
    assert evaluate("a + 1", env) == 2
    assert env == {"a": 1}
