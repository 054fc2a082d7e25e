import pytest

from word_wrap import fill, wrap


def test_spec_examples():
    assert wrap("The quick brown fox", 10) == ["The quick", "brown fox"]
    assert wrap("abcdefghij xy", 4) == ["abcd", "efgh", "ij", "xy"]
    assert wrap("abcdefg h", 5) == ["abcde", "fg h"]


def test_line_of_exactly_width_is_allowed():
    assert wrap("abc def ghi", 7) == ["abc def", "ghi"]
    assert wrap("abc def ghi", 6) == ["abc", "def", "ghi"]


def test_word_exactly_width_is_not_long():
    assert wrap("abcde fg", 5) == ["abcde", "fg"]


def test_whitespace_collapsed_inside_paragraph():
    assert wrap("  one\ttwo \n  three   four  ", 100) == ["one two three four"]


def test_empty_and_blank_text():
    assert wrap("", 10) == []
    assert wrap(" \n\t\n   ", 10) == []


def test_paragraphs_separated_by_one_empty_string():
    text = "\n\nfirst para\n \n\t\n\nsecond para here\n\n"
    assert wrap(text, 11) == ["first para", "", "second para", "here"]


def test_single_newline_does_not_split_paragraph():
    assert wrap("alpha\nbeta", 20) == ["alpha beta"]


def test_indent_on_first_line_only_by_default_applies_to_all():
    assert wrap("aa bb cc dd", 6, indent="> ") == ["> aa", "> bb", "> cc", "> dd"]
    assert wrap("aa bb cc dd", 8, indent="> ") == ["> aa bb", "> cc dd"]


def test_subsequent_indent():
    assert wrap("aa bb cc dd ee", 7, indent="* ", subsequent_indent="  ") == ["* aa bb", "  cc dd", "  ee"]
    assert wrap("aa bb cc dd", 6, indent="", subsequent_indent="---") == ["aa bb", "---cc", "---dd"]


def test_indent_restarts_for_each_paragraph():
    assert wrap("aa bb\n\ncc dd", 5, indent="1", subsequent_indent="2") == ["1aa", "2bb", "", "1cc", "2dd"]


def test_long_word_breaks_with_indents():
    result = wrap("hi abcdefghijkl z", 6, indent=">", subsequent_indent="..")
    assert result == [">hi", "..abcd", "..efgh", "..ijkl", "..z"]


def test_long_word_first_piece_uses_first_indent():
    assert wrap("abcdefgh", 5, indent="#", subsequent_indent="") == ["#abcd", "efgh"]


def test_long_word_starts_new_line_even_if_room_left():
    assert wrap("ab cdefghij", 5) == ["ab", "cdefg", "hij"]


def test_last_piece_continues_with_next_words():
    assert wrap("abcdefg h i", 5) == ["abcde", "fg h", "i"]


def test_long_word_exact_multiple_of_room():
    assert wrap("abcdefgh xy", 4) == ["abcd", "efgh", "xy"]


def test_no_break_long_words():
    assert wrap("hi abcdefghijkl z", 6, break_long_words=False) == ["hi", "abcdefghijkl", "z"]
    assert wrap("abcdefg h", 5, break_long_words=False, indent=">") == [">abcdefg", ">h"]


def test_width_one():
    assert wrap("ab c", 1) == ["a", "b", "c"]


def test_no_line_ends_with_space():
    for line in wrap("a b c d e f g h i j k", 4, indent=" "):
        assert not line.endswith(" ")
        assert len(line) <= 4


@pytest.mark.parametrize("width", [0, -2, True, 3.0, "10", None])
def test_bad_width(width):
    with pytest.raises(ValueError):
        wrap("text", width)


def test_indent_too_wide():
    with pytest.raises(ValueError):
        wrap("text", 3, indent="abc")
    with pytest.raises(ValueError):
        wrap("text", 3, subsequent_indent="    ")
    with pytest.raises(ValueError):
        wrap("", 2, indent="  ")
    assert wrap("a b", 3, indent="aa") == ["aaa", "aab"]


def test_text_type_error():
    with pytest.raises(TypeError):
        wrap(None, 10)
    with pytest.raises(TypeError):
        wrap(["a"], 10)


def test_fill_joins_lines():
    assert fill("aa bb\n\ncc", 5, indent="-") == "-aa\n-bb\n\n-cc"
    assert fill("", 5) == ""


def test_room_follows_the_indent_of_each_line():
    assert wrap("aa bbbb", 6, indent="", subsequent_indent="---") == ["aa", "---bbb", "---b"]
    assert wrap("aa bbbbb", 6, indent="** ", subsequent_indent="") == ["** aa", "bbbbb"]


def test_pieces_after_first_use_subsequent_indent_room():
    assert wrap("abcdefghij", 5, indent="##", subsequent_indent="") == ["##abc", "defgh", "ij"]
    assert wrap("abcdefghij", 5, indent="", subsequent_indent="..") == ["abcde", "..fgh", "..ij"]


def test_single_line_paragraph_uses_first_indent():
    assert wrap("aa bb", 10, indent="* ", subsequent_indent="  ") == ["* aa bb"]


def test_tab_only_line_is_blank():
    assert wrap("a\n\t\nb", 10) == ["a", "", "b"]
