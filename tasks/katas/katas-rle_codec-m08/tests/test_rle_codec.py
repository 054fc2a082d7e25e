import pytest

from rle_codec import RLEError, decode, encode, runs


def error_position(data, **kwargs):
    with pytest.raises(RLEError) as info:
        decode(data, **kwargs)
    assert isinstance(info.value, ValueError)
    return info.value.position


def test_runs_basic():
    assert runs("aaabcc") == [("a", 3), ("b", 1), ("c", 2)]
    assert runs("") == []
    assert runs("abab") == [("a", 1), ("b", 1), ("a", 1), ("b", 1)]


def test_runs_type_error():
    with pytest.raises(TypeError):
        runs(["a"])


def test_encode_examples():
    assert encode("aaab") == "3ab"
    assert encode("x" * 12) == "12x"
    assert encode("") == ""
    assert encode("abc") == "abc"


def test_encode_escapes_digits_and_backslash():
    assert encode("111") == "3\\1"
    assert encode("7") == "\\7"
    assert encode("\\") == "\\\\"
    assert encode("a\\\\") == "a2\\\\"
    assert encode("90") == "\\9\\0"


def test_encode_non_ascii_digit_not_escaped():
    assert encode("٣٣") == "2٣"


def test_encode_run_of_exactly_two_and_ten():
    assert encode("zz") == "2z"
    assert encode("q" * 10 + "r") == "10qr"


def test_encode_type_error():
    with pytest.raises(TypeError):
        encode(None)


def test_decode_examples():
    assert decode("3ab") == "aaab"
    assert decode("12x") == "x" * 12
    assert decode("") == ""
    assert decode("3\\1") == "111"


def test_decode_accepts_non_canonical():
    assert decode("1a2a") == "aaa"


def test_decode_multi_digit_count_and_escaped_digit():
    assert decode("10\\5") == "5" * 10
    assert decode("2\\\\a") == "\\\\a"


def test_decode_newlines_and_spaces_are_symbols():
    assert decode("2 3\n") == "  \n\n\n"


@pytest.mark.parametrize("text", ["", "a", "aaab", "1111", "\\\\\\", "a1b22c333", "٣3x\n\n", "0", "\\0" * 3])
def test_round_trip(text):
    assert decode(encode(text)) == text


def test_leading_zero_count():
    assert error_position("0a") == 0
    assert error_position("05a") == 0
    assert error_position("ab0c") == 2


def test_count_without_symbol():
    assert error_position("12") == 2
    assert error_position("a3") == 2


def test_bad_escapes():
    assert error_position("\\a") == 0
    assert error_position("xy\\") == 2
    assert error_position("3\\") == 1
    assert error_position("2\\z") == 1


def test_max_length_allows_exact_size():
    assert decode("5a5b", max_length=10) == "aaaaabbbbb"
    assert decode("", max_length=0) == ""


def test_max_length_exceeded_reports_item_start():
    assert error_position("5a6b", max_length=10) == 2
    assert error_position("4a4b4c", max_length=10) == 4
    assert error_position("ab", max_length=1) == 1
    assert error_position("a", max_length=0) == 0


def test_max_length_checked_before_expanding_huge_count():
    assert error_position("3a999999999999999b", max_length=10) == 2


@pytest.mark.parametrize("limit", [-1, 1.5, "3", True])
def test_max_length_invalid(limit):
    with pytest.raises(ValueError):
        decode("", max_length=limit)


def test_decode_type_error():
    with pytest.raises(TypeError):
        decode(b"3a")
