import pytest

import slugify_text
from slugify_text import DEFAULT_TABLE, slugify, unique_slug


def raises_value_error(**kwargs):
    try:
        slugify("sample text", **kwargs)
    except ValueError:
        return True
    return False


def test_smoke_simple_sentence():
    assert slugify("Make It Work") == "make-it-work"


def test_smoke_returns_str():
    assert isinstance(slugify("anything at all"), str)


def test_smoke_unique_when_free():
    assert unique_slug("New Post", []) == "new-post"


def test_limit_exact_fit_of_two_words():
    assert slugify("data science", max_length=12) == "data-science"
    assert slugify("data science notes", max_length=12) == "data-science"


def test_limit_counts_full_separator_length():
    assert slugify("one two six", separator="::", max_length=12) == "one::two"


def test_limit_two_char_separator_exact_fit():
    assert slugify("xy zw", separator="~~", max_length=6) == "xy~~zw"
    assert slugify("xy zw", separator="~~", max_length=5) == "xy"


def test_custom_table_keeps_default_umlauts():
    assert slugify("Bär", table={"#": " sharp "}) == "baer"


def test_custom_entry_overrides_default():
    assert slugify("Bär", table={"ä": "a"}) == "bar"


def test_umlauts_transliterated_not_just_stripped():
    assert slugify("Müller Öl") == "mueller-oel"


def test_long_single_word_is_cut_to_limit():
    assert slugify("Supercalifragilistic", max_length=7) == "superca"


def test_limit_one_cuts_to_one_char():
    assert slugify("zebra", max_length=1) == "z"


def test_zero_limit_rejected():
    assert raises_value_error(max_length=0)


def test_negative_limit_rejected():
    assert raises_value_error(max_length=-1)


def test_three_char_separator_accepted():
    assert slugify("left right", separator="_._") == "left_._right"


def test_separator_with_letter_rejected():
    assert raises_value_error(separator="-x")


def test_separator_with_digit_rejected():
    assert raises_value_error(separator="9_")


def test_unique_second_copy_gets_two():
    assert unique_slug("Report", {"report"}) == "report-2"


def test_unique_no_room_for_base():
    with pytest.raises(ValueError):
        unique_slug("abc", {"ab"}, max_length=2)


def test_unique_room_for_one_char():
    assert unique_slug("abc", {"abc"}, max_length=3) == "a-2"


def test_overfit_error_message_wording():
    with pytest.raises(ValueError, match="1 to 3 characters"):
        slugify("x", separator="")


def test_overfit_default_table_order():
    assert list(DEFAULT_TABLE)[:3] == ["ä", "ö", "ü"]


def test_overfit_private_helper_exists():
    assert slugify_text._truncate(["ab", "cd"], "-", 4) == "ab"


def test_broken_keeps_trailing_separator():
    assert slugify("hello world!") == "hello-world-"


def test_broken_limit_includes_partial_word():
    assert slugify("alpha beta", max_length=8) == "alpha-be"


def test_broken_unique_starts_at_one():
    assert unique_slug("tag", {"tag"}) == "tag-1"
