import pytest

from semver_range import Range, Version, max_satisfying


def v(text):
    return Version.parse(text)


def test_smoke_parse_major():
    assert v("3.1.4").major == 3


def test_smoke_simple_ordering():
    assert v("1.0.0") < v("2.0.0")


def test_smoke_exact_range():
    assert "1.2.3" in Range("1.2.3")


def test_leading_zero_minor_rejected():
    with pytest.raises(ValueError):
        v("1.01.0")


def test_leading_zero_in_numeric_prerelease_rejected():
    with pytest.raises(ValueError):
        v("2.0.0-rc.007")


def test_numeric_prerelease_compared_as_numbers():
    assert v("1.0.0-rc.10") > v("1.0.0-rc.9")


def test_release_above_prerelease():
    assert v("3.0.0") > v("3.0.0-rc.1")


def test_number_below_word_in_prerelease():
    assert v("1.0.0-alpha.1") < v("1.0.0-alpha.beta")


def test_build_does_not_break_equality():
    assert v("2.1.0+linux") == v("2.1.0+mac")


def test_equal_versions_deduplicate_in_set():
    assert len({v("5.0.0+1"), v("5.0.0+2")}) == 1


def test_caret_zero_minor_upper_bound():
    assert "0.5.0" not in Range("^0.4.1")


def test_caret_zero_zero_exact_patch():
    assert "0.0.8" not in Range("^0.0.7")


def test_tilde_excludes_next_minor():
    assert "2.5.0" not in Range("~2.4.0")


def test_prerelease_of_other_version_excluded():
    assert "1.6.0-rc.1" not in Range(">=1.5.0-rc.1 <2.0.0")


def test_alternatives_with_double_bar():
    assert "3.0.0" in Range("^1.0.0 || ^3.0.0")


def test_max_satisfying_picks_highest_in_range():
    assert max_satisfying(["0.9.0", "1.1.0", "1.0.5"], "~1.0.0") == "1.0.5"


def test_overfit_repr_of_version():
    assert repr(v("1.2.3")) == "Version(major=1, minor=2, patch=3, prerelease=(), build=())"


def test_overfit_range_keeps_text():
    assert Range("^1.0.0").text == "^1.0.0"


def test_overfit_error_message():
    with pytest.raises(ValueError, match="invalid version"):
        v("1.0")


def test_broken_build_changes_order():
    assert v("1.0.0+b") > v("1.0.0+a")


def test_broken_caret_zero_allows_minor():
    assert "0.3.0" in Range("^0.2.0")


def test_broken_prerelease_lexical_numbers():
    assert v("1.0.0-2") > v("1.0.0-10")
