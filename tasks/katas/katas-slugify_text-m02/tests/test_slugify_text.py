import pytest

from slugify_text import DEFAULT_TABLE, slugify, unique_slug


def test_basic_words_and_punctuation():
    assert slugify("  Hello,   World!! ") == "hello-world"


def test_underscore_and_symbols_separate_words():
    assert slugify("snake_case/path.name") == "snake-case-path-name"


def test_default_transliteration_and_ampersand():
    assert slugify("Grüße & Küsse") == "gruesse-and-kuesse"
    assert slugify("Ærø Łódź Đak", lowercase=False) == "AEro-Lodz-Dak"


def test_uppercase_umlaut_keeps_case_when_not_lowercasing():
    assert slugify("Österreich Über", lowercase=False) == "Oesterreich-Ueber"


def test_accents_are_stripped():
    assert slugify("Crème Brûlée à la carte") == "creme-brulee-a-la-carte"


def test_combining_marks_in_input_are_dropped():
    assert slugify("cafe\u0301") == "cafe"


def test_unmapped_non_ascii_separates_words():
    assert slugify("price€10中文end") == "price-10-end"


def test_custom_table_overrides_and_extends():
    assert slugify("ä € x", table={"ä": "a", "€": "euro"}) == "a-euro-x"


def test_custom_table_keeps_default_entries():
    assert slugify("Grüße €", table={"€": "euro"}) == "gruesse-euro"


def test_replacement_is_not_translated_again():
    assert slugify("q", table={"q": "ü"}) == "u"
    assert slugify("x", table={"x": "&"}) == ""


def test_default_table_not_modified():
    before = dict(DEFAULT_TABLE)
    slugify("ä", table={"ä": "zz", "ñ": "n"})
    assert DEFAULT_TABLE == before


def test_ampersand_without_spaces_becomes_a_word():
    assert slugify("salt&pepper") == "salt-and-pepper"


def test_compatibility_characters_are_decomposed():
    assert slugify("ﬁne x²") == "fine-x2"


def test_non_ascii_letter_is_a_valid_separator():
    assert slugify("a b", separator="é") == "aéb"


def test_custom_separator_multi_char():
    assert slugify("a b  c", separator="__") == "a__b__c"


def test_no_words_gives_empty_string():
    assert slugify(" !!! ") == ""
    assert slugify("") == ""


def test_max_length_keeps_whole_words():
    assert slugify("the quick brown fox", max_length=9) == "the-quick"
    assert slugify("the quick brown fox", max_length=14) == "the-quick"
    assert slugify("the quick brown fox", max_length=15) == "the-quick-brown"


def test_max_length_equal_to_length_unchanged():
    assert slugify("ab cd", max_length=5) == "ab-cd"
    assert slugify("ab cd", max_length=4) == "ab"


def test_max_length_cuts_long_first_word():
    assert slugify("Extraordinary day", max_length=5) == "extra"
    assert slugify("abc", max_length=1) == "a"


def test_max_length_with_long_separator():
    assert slugify("ab cd ef", separator="-.-", max_length=9) == "ab-.-cd"
    assert slugify("ab cd", separator="-.-", max_length=4) == "ab"


def test_text_type_error():
    with pytest.raises(TypeError):
        slugify(b"bytes")
    with pytest.raises(TypeError):
        unique_slug(12, set())


@pytest.mark.parametrize("sep", ["", "----", "a", "-1", 5])
def test_bad_separator(sep):
    with pytest.raises(ValueError):
        slugify("a b", separator=sep)


@pytest.mark.parametrize("limit", [0, -3, True, 2.5, "4"])
def test_bad_max_length(limit):
    with pytest.raises(ValueError):
        slugify("a b", max_length=limit)


def test_unique_slug_free_base():
    assert unique_slug("Hello World", {"other"}) == "hello-world"


def test_unique_slug_counts_from_two():
    taken = {"hello-world", "hello-world-2"}
    assert unique_slug("Hello World", taken) == "hello-world-3"
    assert taken == {"hello-world", "hello-world-2"}


def test_unique_slug_empty_text_uses_item():
    assert unique_slug("!!!", set()) == "item"
    assert unique_slug("", ["item"]) == "item-2"


def test_unique_slug_respects_max_length():
    assert unique_slug("hello world", {"hello"}, max_length=5) == "hel-2"
    assert unique_slug("ab cd ef", {"ab-cd-ef"}, max_length=8) == "ab-cd-2"


def test_unique_slug_separator_used_for_suffix():
    assert unique_slug("a b", {"a_b"}, separator="_") == "a_b_2"
    assert unique_slug("a b", {"a--b"}, separator="--") == "a--b--2"


def test_unique_slug_no_room_raises():
    with pytest.raises(ValueError):
        unique_slug("hello", {"he"}, max_length=2)


def test_unique_slug_reaches_two_digit_numbers():
    taken = {"go"} | {f"go-{n}" for n in range(2, 10)}
    assert unique_slug("go", taken) == "go-10"
    taken = {"gone"} | {f"gon-{n}" for n in range(2, 10)}
    assert unique_slug("gone", taken, max_length=5) == "go-10"
