import pytest

import rle_codec
from rle_codec import RLEError, decode, encode, runs


def position_of(data, **kwargs):
    try:
        decode(data, **kwargs)
    except RLEError as exc:
        return exc.position
    return None


def test_smoke_encode_plain_letters():
    assert encode("xyz") == "xyz"


def test_smoke_decode_plain_letters():
    assert decode("xyz") == "xyz"


def test_smoke_runs_single_char():
    assert runs("k") == [("k", 1)]


def test_long_run_counted():
    assert encode("bbbbb") == "5b"


def test_runs_of_five_and_four():
    assert runs("mmmmmnnnn") == [("m", 5), ("n", 4)]


def test_backslash_run_round_trip():
    text = "\\\\\\x"
    assert decode(encode(text)) == text


def test_single_chars_have_no_count():
    assert encode("ab") == "ab"


def test_zero_count_in_middle_rejected():
    assert position_of("x0y") == 1


def test_dangling_count_position():
    assert position_of("bb7") == 3


def test_trailing_backslash_is_rle_error():
    assert position_of("ab\\") == 2


def test_bad_escape_position_points_at_backslash():
    assert position_of("ok\\q") == 2


def test_limit_exact_fit():
    assert decode("3z", max_length=3) == "zzz"


def test_limit_accumulates_over_items():
    assert position_of("2a2b2c", max_length=5) == 4


def test_limit_error_position_of_item_start():
    assert position_of("a12b", max_length=5) == 1


def test_zero_limit_with_empty_data():
    assert decode("", max_length=0) == ""


def test_overfit_error_message_suffix():
    with pytest.raises(RLEError, match="at position 0$"):
        decode("0z")


def test_overfit_module_escape_constant():
    assert rle_codec._ESCAPE == "\\"


def test_overfit_type_error_message():
    with pytest.raises(TypeError, match="data must be a str"):
        decode(42)


def test_broken_count_before_one_char():
    assert encode("ab") == "1a1b"


def test_broken_limit_is_exclusive():
    with pytest.raises(RLEError):
        decode("4q", max_length=4)


def test_broken_digits_are_counts_even_when_escaped():
    assert decode("2\\3") == "333"
