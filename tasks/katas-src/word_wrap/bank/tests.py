import pytest

import word_wrap
from word_wrap import fill, wrap


def widest(lines):
    return max(len(line) for line in lines)


def test_smoke_short_text_one_line():
    assert wrap("hello", 20) == ["hello"]


def test_smoke_fill_returns_string():
    assert isinstance(fill("a b c", 3), str)


def test_smoke_two_words_two_lines():
    assert wrap("left right", 6) == ["left", "right"]


def test_exact_fit_two_words():
    assert wrap("ab cd", 5) == ["ab cd"]


def test_next_line_room_with_longer_subsequent_indent():
    lines = wrap("x yyyyyy", 7, subsequent_indent="    ")
    assert lines == ["x", "    yyy", "    yyy"]


def test_long_word_pieces_keep_every_char():
    lines = wrap("0123456789", 3)
    assert "".join(lines) == "0123456789"


def test_long_word_pieces_respect_subsequent_indent():
    assert wrap("0123456789", 4, subsequent_indent="~") == ["0123", "~456", "~789"]


def test_indented_pieces_within_width():
    lines = wrap("abcdefghijklmno", 6, indent="", subsequent_indent="   ")
    assert widest(lines) <= 6


def test_one_paragraph_no_leading_blank():
    assert wrap("just one", 20)[0] == "just one"


def test_space_only_line_splits_paragraphs():
    assert wrap("first\n   \nsecond", 20) == ["first", "", "second"]


def test_three_paragraphs_distinct():
    assert wrap("a\n\nb\n\nc", 5) == ["a", "", "b", "", "c"]


def test_default_subsequent_indent_is_indent():
    assert wrap("one two three", 9, indent="  ") == ["  one two", "  three"]


def test_lone_line_gets_first_indent():
    assert wrap("solo", 10, indent="- ", subsequent_indent="  ") == ["- solo"]


def test_overfit_error_message_for_indent():
    with pytest.raises(ValueError, match="no room"):
        wrap("text", 2, indent="  ")


def test_overfit_private_paragraph_helper():
    assert word_wrap._paragraphs("a b\n\nc") == [["a", "b"], ["c"]]


def test_overfit_type_error_wording():
    with pytest.raises(TypeError, match="got int"):
        wrap(5, 10)


def test_broken_keeps_double_spaces():
    assert wrap("a  b", 10) == ["a  b"]


def test_broken_long_word_fills_current_line():
    assert wrap("ab cdefghij", 5) == ["ab cd", "efghi", "j"]


def test_broken_blank_text_gives_empty_line():
    assert wrap("   ", 5) == [""]
