import pytest

from prefix_index import PrefixIndex


def index_of(*words):
    ix = PrefixIndex()
    for w in words:
        ix.add(w)
    return ix


def spent(ix, fn, *args, **kw):
    start = ix.visits
    out = fn(*args, **kw)
    return out, ix.visits - start


def test_smoke_add_then_contains():
    ix = index_of("tree")
    assert "tree" in ix


def test_smoke_len():
    assert len(index_of("a", "b", "c")) == 3


def test_smoke_visits_is_int():
    assert isinstance(PrefixIndex().visits, int)


def test_alphabetical_listing():
    ix = index_of("pear", "apple", "plum", "apricot")
    assert ix.search("") == ["apple", "apricot", "pear", "plum"]


def test_short_word_before_longer():
    ix = index_of("sunset", "sun", "sunny")
    assert ix.search("sun") == ["sun", "sunny", "sunset"]


def test_limit_exact():
    ix = index_of("ma", "mb", "mc", "md")
    assert ix.search("m", limit=3) == ["ma", "mb", "mc"]


def test_removal_prunes_dead_branches():
    ix = PrefixIndex()
    for i in range(50):
        ix.add(f"tmp{i:02d}long")
    ix.add("t")
    for i in range(50):
        ix.remove(f"tmp{i:02d}long")
    found, cost = spent(ix, ix.search, "t")
    assert found == ["t"]
    assert cost <= 2


def test_len_after_remove():
    ix = index_of("one", "two")
    ix.remove("two")
    assert len(ix) == 1


def test_readd_existing_prefix_word():
    ix = index_of("in", "inner")
    assert ix.add("in") is False
    assert ix.count("in") == 2


def test_count_walk_cost():
    ix = index_of("stone", "store")
    count, cost = spent(ix, ix.count, "sto")
    assert count == 2
    assert cost == 4


def test_count_of_inner_prefix():
    ix = index_of("stone", "store", "stay")
    assert ix.count("st") == 3


def test_prefix_is_not_member():
    ix = index_of("banana")
    assert "ban" not in ix


def test_empty_word_rejected():
    with pytest.raises(ValueError):
        PrefixIndex().add("")


def test_overfit_add_does_not_count_visits():
    ix = PrefixIndex()
    ix.add("alpha")
    ix.add("alpine")
    assert "alpha" in ix
    assert ix.visits == 0


def test_overfit_type_error_message():
    with pytest.raises(TypeError, match="word must be a str, not int"):
        PrefixIndex().add(7)


def test_broken_expects_case_insensitive_search():
    ix = index_of("Apple", "apricot")
    assert ix.search("a") == ["Apple", "apricot"]


def test_broken_expects_count_to_cost_nothing():
    ix = index_of("x", "xy")
    _, cost = spent(ix, ix.count, "x")
    assert cost == 0
