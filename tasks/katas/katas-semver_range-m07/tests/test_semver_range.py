import pytest

from semver_range import Range, Version, max_satisfying

V = Version.parse


def test_parse_fields():
    v = V("1.22.333-alpha.7.x-y+build.007")
    assert (v.major, v.minor, v.patch) == (1, 22, 333)
    assert v.prerelease == ("alpha", 7, "x-y")
    assert v.build == ("build", "007")
    assert V("1.0.0-rc.12").prerelease == ("rc", 12)


def test_parse_plain_and_str_round_trip():
    for text in ["0.0.0", "1.2.3", "10.20.30-rc.1", "1.0.0+sha.5114f85", "1.0.0-0a.1+x", "2.0.0-x-y-z.--"]:
        assert str(V(text)) == text
    v = V("4.5.6")
    assert v.prerelease == () and v.build == ()
    assert V("1.0.0-0").prerelease == (0,)


@pytest.mark.parametrize("text", [
    "01.0.0", "1.02.0", "1.0.00", "1.0", "1.0.0.0", "1.0.0-", "1.0.0+", "1.0.0-alpha..1",
    "1.0.0-alpha.01", "1.0.0+b..c", "v1.0.0", " 1.0.0", "1.0.0 ", "1.0.0-al!pha", "", "a.b.c",
    "-1.0.0", "1.0.0-+b",
])
def test_parse_invalid(text):
    with pytest.raises(ValueError):
        V(text)


def test_parse_type_error():
    with pytest.raises(TypeError):
        V(1.0)


def test_precedence_spec_chain():
    chain = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2",
             "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0"]
    versions = [V(t) for t in chain]
    for a, b in zip(versions, versions[1:]):
        assert a < b and b > a and a <= b and not a >= b and a != b
    assert sorted(reversed(versions)) == versions


def test_core_numbers_compare_numerically():
    assert V("1.10.0") > V("1.9.0")
    assert V("2.0.0") > V("1.99.99")
    assert V("1.0.10") > V("1.0.9")


def test_numeric_identifier_lower_than_alphanumeric():
    assert V("1.0.0-9") < V("1.0.0-a")
    assert V("1.0.0-beta.11") > V("1.0.0-beta.2")
    assert V("1.0.0-Z") < V("1.0.0-a")
    assert V("1.0.0-99") < V("1.0.0-100")


def test_build_metadata_ignored():
    a, b = V("1.0.0+a"), V("1.0.0+b")
    assert a == b and hash(a) == hash(b)
    assert not a < b and not b < a
    assert len({a, b, V("1.0.0")}) == 1
    assert V("1.0.0-rc.1+x") == V("1.0.0-rc.1")


def test_caret_major():
    r = Range("^1.2.3")
    assert "1.2.3" in r and "1.9.9" in r
    assert "1.2.2" not in r and "2.0.0" not in r


def test_caret_zero_major_and_zero_minor():
    assert [v for v in ["0.2.3", "0.2.9", "0.3.0", "0.2.2"] if v in Range("^0.2.3")] == ["0.2.3", "0.2.9"]
    assert [v for v in ["0.0.3", "0.0.4", "0.0.2"] if v in Range("^0.0.3")] == ["0.0.3"]


def test_tilde():
    r = Range("~1.2.3")
    assert "1.2.3" in r and "1.2.9" in r
    assert "1.3.0" not in r and "1.2.2" not in r
    assert "0.1.5" in Range("~0.1.0") and "0.2.0" not in Range("~0.1.0")


def test_primitive_operators():
    assert "1.0.1" in Range(">1.0.0") and "1.0.0" not in Range(">1.0.0")
    assert "1.0.0" in Range(">=1.0.0")
    assert "0.9.9" in Range("<1.0.0") and "1.0.0" not in Range("<1.0.0")
    assert "1.0.0" in Range("<=1.0.0") and "1.0.1" not in Range("<=1.0.0")
    assert "1.0.0+meta" in Range("=1.0.0") and "1.0.0" in Range("1.0.0") and "1.0.1" not in Range("1.0.0")


def test_and_within_set_or_between_sets():
    r = Range(">=1.0.0 <1.5.0 || >=2.0.0 <=2.1.0")
    assert [v for v in ["0.9.0", "1.0.0", "1.4.9", "1.5.0", "2.0.0", "2.1.0", "2.1.1"] if v in r] == [
        "1.0.0", "1.4.9", "2.0.0", "2.1.0"]


def test_star_matches_releases_only():
    assert "0.0.0" in Range("*") and "99.1.2" in Range("*")
    assert "1.0.0-alpha" not in Range("*")


def test_prerelease_excluded_without_matching_comparator():
    assert "1.3.0-beta" not in Range("^1.2.3")
    assert "2.0.0-alpha" not in Range("<2.0.0")
    assert "1.3.0-beta" not in Range(">=1.2.0 <1.3.0")


def test_prerelease_allowed_on_same_core():
    r = Range(">=1.3.0-alpha <2.0.0")
    assert "1.3.0-beta" in r
    assert "1.3.0-alpha" in r
    assert "1.4.0-beta" not in r
    assert "1.3.5" in r


def test_prerelease_rule_is_per_set():
    r = Range(">=1.0.0-rc.1 <1.0.0 || ^2.0.0")
    assert "1.0.0-rc.2" in r
    assert "2.1.0-rc.1" not in r


def test_caret_with_prerelease():
    r = Range("^1.2.3-beta.2")
    assert "1.2.3-beta.4" in r and "1.2.3" in r and "1.9.0" in r
    assert "1.2.3-beta.1" not in r and "1.2.4-beta.1" not in r and "2.0.0" not in r


def test_contains_accepts_version_objects():
    r = Range("^1.0.0")
    assert r.contains(V("1.5.0")) and not r.contains(V("2.0.0"))
    assert r.contains("1.0.0")


def test_range_whitespace_handling():
    assert "1.2.0" in Range("  >=1.0.0   <2.0.0  ||3.0.0  ")


@pytest.mark.parametrize("text", ["", "   ", "1.0.0 ||", "|| 1.0.0", ">= 1.0.0", "!1.0.0", "^1.0", "1.0.0 || || 2.0.0", "x", "1.0.0 | 2.0.0"])
def test_range_invalid(text):
    with pytest.raises(ValueError):
        Range(text)


def test_range_type_error():
    with pytest.raises(TypeError):
        Range(None)


def test_max_satisfying():
    assert max_satisfying(["1.2.3", "1.4.0", "2.0.0", "1.3.9"], "^1.0.0") == "1.4.0"
    assert max_satisfying(["2.0.0", "3.0.0"], "^1.0.0") is None
    assert max_satisfying([], "*") is None


def test_max_satisfying_returns_items_as_given_first_on_ties():
    first = V("1.4.0+a")
    assert max_satisfying([first, "1.4.0+b", "1.1.0"], "^1.0.0") is first
    assert max_satisfying(["1.4.0+b", first], "^1.0.0") == "1.4.0+b"


def test_max_satisfying_prerelease_rule():
    assert max_satisfying(["1.2.0", "1.3.0-beta", "1.2.5"], "^1.2.0") == "1.2.5"
    assert max_satisfying(["1.3.0-beta", "1.3.0-alpha"], ">=1.3.0-alpha") == "1.3.0-beta"
