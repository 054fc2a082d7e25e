import pytest

from prefix_index import PrefixIndex

WORDS = ["car", "cart", "care", "careful", "cat", "dog", "do", "dot", "zebra", "Car", "éclair"]


def build(words=WORDS):
    ix = PrefixIndex()
    for w in words:
        ix.add(w)
    return ix


def cost(ix, fn, *args, **kwargs):
    before = ix.visits
    result = fn(*args, **kwargs)
    return result, ix.visits - before


def bound(prefix, words):
    return len(prefix) + 1 + sum(len(w) - len(prefix) for w in words)


def test_empty_index():
    ix = PrefixIndex()
    assert len(ix) == 0
    assert ix.visits == 0
    assert ix.search("") == []
    assert ix.count("") == 0


def test_add_reports_new_and_duplicate():
    ix = PrefixIndex()
    assert ix.add("word") is True
    assert ix.add("word") is False
    assert len(ix) == 1
    assert ix.count("w") == 1


def test_re_adding_a_word_with_extensions_is_not_new():
    ix = build()
    assert ix.add("car") is False
    assert ix.add("do") is False
    assert len(ix) == len(WORDS)
    assert ix.count("car") == 4
    assert ix.search("do") == ["do", "dog", "dot"]


def test_search_is_code_point_sorted_with_prefix_first():
    ix = build()
    assert ix.search("car") == ["car", "care", "careful", "cart"]
    assert ix.search("") == sorted(WORDS)


def test_search_order_independent_of_insertion_order():
    ix = build(["b", "a", "ab", "c", "aa"])
    assert ix.search("") == ["a", "aa", "ab", "b", "c"]


def test_search_is_case_sensitive():
    ix = build()
    assert ix.search("C") == ["Car"]
    assert ix.search("c") == ["car", "care", "careful", "cart", "cat"]


def test_search_exact_word_and_missing_prefix():
    ix = build()
    assert ix.search("careful") == ["careful"]
    assert ix.search("carefully") == []
    assert ix.search("q") == []


def test_limit_returns_first_words_in_order():
    ix = build()
    assert ix.search("car", limit=2) == ["car", "care"]
    assert ix.search("car", limit=1) == ["car"]
    assert ix.search("car", limit=4) == ["car", "care", "careful", "cart"]
    assert ix.search("car", limit=10) == ["car", "care", "careful", "cart"]
    assert ix.search("car", limit=0) == []


def test_limit_validation():
    ix = build()
    with pytest.raises(ValueError):
        ix.search("c", limit=-1)
    with pytest.raises(TypeError):
        ix.search("c", limit=True)
    with pytest.raises(TypeError):
        ix.search("c", limit=1.5)


def test_count_prefixes():
    ix = build()
    assert ix.count("") == len(WORDS)
    assert ix.count("car") == 4
    assert ix.count("ca") == 5
    assert ix.count("do") == 3
    assert ix.count("cart") == 1
    assert ix.count("x") == 0
    assert ix.count("cartx") == 0


def test_contains_only_stored_words():
    ix = build()
    assert "care" in ix
    assert "ca" not in ix
    assert "careless" not in ix
    assert 5 not in ix
    assert None not in ix


def test_add_and_remove_validate_words():
    ix = build()
    for bad in (None, 3, b"car", ["car"]):
        with pytest.raises(TypeError):
            ix.add(bad)
        with pytest.raises(TypeError):
            ix.remove(bad)
    with pytest.raises(ValueError):
        ix.add("")
    with pytest.raises(ValueError):
        ix.remove("")
    assert len(ix) == len(WORDS)
    assert ix.search("") == sorted(WORDS)


def test_search_and_count_need_str_prefix():
    ix = build()
    before = ix.visits
    with pytest.raises(TypeError):
        ix.search(None)
    with pytest.raises(TypeError):
        ix.count(3)
    assert ix.visits == before


def test_remove_word_keeps_extensions():
    ix = build()
    assert ix.remove("car") is True
    assert "car" not in ix
    assert "cart" in ix
    assert ix.search("car") == ["care", "careful", "cart"]
    assert ix.count("car") == 3
    assert len(ix) == len(WORDS) - 1


def test_remove_leaf_keeps_prefix_word():
    ix = build()
    assert ix.remove("careful") is True
    assert ix.search("care") == ["care"]
    assert ix.count("care") == 1


def test_remove_missing_and_prefix_only():
    ix = build()
    assert ix.remove("ca") is False
    assert ix.remove("carts") is False
    assert ix.remove("xyz") is False
    assert len(ix) == len(WORDS)
    assert ix.count("ca") == 5
    assert ix.search("ca") == ["car", "care", "careful", "cart", "cat"]


def test_remove_then_add_again():
    ix = build(["abc"])
    assert ix.remove("abc") is True
    assert len(ix) == 0
    assert ix.search("a") == []
    assert ix.count("a") == 0
    assert ix.add("abc") is True
    assert ix.search("") == ["abc"]


def test_count_costs_exactly_the_walk():
    ix = build()
    assert cost(ix, ix.count, "car") == (4, 4)
    assert cost(ix, ix.count, "") == (len(WORDS), 1)
    assert cost(ix, ix.count, "cax") == (0, 3)
    assert cost(ix, ix.count, "q") == (0, 1)


def test_search_costs_at_least_the_walk():
    ix = build()
    _, spent = cost(ix, ix.search, "dog")
    assert spent >= 4
    _, spent = cost(ix, ix.search, "zz")
    assert spent == 2


def test_search_cost_bound_small():
    ix = build()
    for prefix in ["", "c", "car", "care", "do", "zebra", "x"]:
        found, spent = cost(ix, ix.search, prefix)
        assert spent <= bound(prefix, found)


def test_search_cost_does_not_depend_on_other_words():
    ix = PrefixIndex()
    for i in range(400):
        ix.add(f"w{i:04d}")
    ix.add("hello")
    found, spent = cost(ix, ix.search, "h")
    assert found == ["hello"]
    assert spent <= bound("h", found)
    assert ix.count("w") == 400


def test_limited_search_cost_counts_returned_words_only():
    ix = PrefixIndex()
    for i in range(300):
        ix.add(f"item{i:03d}")
    found, spent = cost(ix, ix.search, "item", limit=3)
    assert found == ["item000", "item001", "item002"]
    assert spent <= bound("item", found)


def test_search_cost_after_removals():
    ix = PrefixIndex()
    for i in range(200):
        ix.add(f"gone{i:03d}x")
    ix.add("go")
    for i in range(200):
        assert ix.remove(f"gone{i:03d}x") is True
    found, spent = cost(ix, ix.search, "go")
    assert found == ["go"]
    assert spent <= bound("go", found)
    assert ix.count("gon") == 0


def test_visits_are_cumulative():
    ix = build()
    seen = [ix.visits]
    for prefix in ["c", "ca", "", "d", "zz"]:
        ix.search(prefix)
        seen.append(ix.visits)
        ix.count(prefix)
        seen.append(ix.visits)
    assert seen == sorted(seen)
    assert seen[-1] > seen[0]
