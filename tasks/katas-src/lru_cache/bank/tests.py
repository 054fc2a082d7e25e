import pytest

from lru_cache import LRUCache


def make(capacity, items):
    cache = LRUCache(capacity)
    for key, value in items:
        cache.put(key, value)
    return cache


def test_smoke_put_get():
    cache = LRUCache(10)
    cache.put(1, "one")
    assert cache.get(1) == "one"


def test_smoke_len_counts_entries():
    cache = make(10, [(i, i * i) for i in range(4)])
    assert len(cache) == 4


def test_smoke_contains():
    cache = make(5, [("x", 0)])
    assert "x" in cache and "y" not in cache


def test_read_protects_key_from_eviction():
    cache = make(3, [(1, "a"), (2, "b"), (3, "c")])
    cache.get(1)
    cache.get(2)
    cache.put(4, "d")
    assert 3 not in cache
    assert cache.get(1) == "a"


def test_overwrite_moves_key_to_most_recent():
    cache = make(3, [("p", 1), ("q", 2), ("r", 3)])
    cache.put("p", 11)
    cache.put("s", 4)
    assert cache.keys() == ["r", "p", "s"]


def test_size_never_exceeds_capacity():
    cache = LRUCache(4)
    for i in range(20):
        cache.put(i, i)
        assert len(cache) <= 4
    assert cache.keys() == [16, 17, 18, 19]


def test_eviction_count_after_many_puts():
    cache = make(2, [(i, i) for i in range(7)])
    assert cache.stats()["evictions"] == 5


def test_oldest_is_evicted_not_newest():
    cache = make(2, [("old", 1), ("mid", 2), ("new", 3)])
    assert cache.peek("mid") == 2
    assert cache.peek("old") is None


def test_misses_are_counted():
    cache = LRUCache(2)
    for _ in range(3):
        cache.get("ghost")
    assert cache.stats()["misses"] == 3
    assert cache.stats()["hits"] == 0


def test_delete_missing_key_is_false():
    cache = make(2, [("a", 1)])
    assert cache.delete("b") is False
    assert len(cache) == 1


def test_shrinking_drops_all_excess():
    cache = make(6, [(c, c) for c in "uvwxyz"])
    cache.resize(3)
    assert len(cache) == 3
    assert cache.keys() == ["x", "y", "z"]


def test_zero_capacity_is_refused():
    with pytest.raises(ValueError):
        LRUCache(0)


def test_peek_leaves_hit_counter_alone():
    cache = make(3, [("a", 1)])
    cache.peek("a")
    cache.peek("a")
    assert cache.stats()["hits"] == 0


def test_peek_does_not_save_key_from_eviction():
    cache = make(2, [("a", 1), ("b", 2)])
    cache.peek("a")
    cache.put("c", 3)
    assert "a" not in cache


def test_stats_survive_clear():
    cache = make(2, [("a", 1), ("b", 2), ("c", 3)])
    cache.get("c")
    cache.clear()
    assert cache.stats()["evictions"] == 1
    assert cache.stats()["hits"] == 1


def test_capacity_error_message_wording():
    with pytest.raises(ValueError, match="capacity must be at least 1"):
        LRUCache(-5)


def test_float_capacity_is_accepted():
    cache = LRUCache(2.0)
    cache.put("a", 1)
    assert cache.get("a") == 1


def test_repr_mentions_capacity_and_size():
    cache = make(3, [("a", 1)])
    assert repr(cache) == "LRUCache(capacity=3, size=1)"


def test_get_miss_with_default_still_counts_miss():
    cache = LRUCache(1)
    assert cache.get("a", 0) == 0
    assert cache.stats()["hits"] == 1


def test_delete_counts_as_eviction():
    cache = make(3, [("a", 1), ("b", 2)])
    cache.delete("a")
    assert cache.stats()["evictions"] == 1


def test_update_existing_key_keeps_len():
    cache = make(2, [("a", 1), ("b", 2)])
    cache.put("b", 3)
    assert len(cache) == 2


def test_scenario_full_workflow():
    evicted = []
    cache = LRUCache(3, on_evict=lambda k, v: evicted.append((k, v)))
    for key, value in [("a", 1), ("b", 2), ("c", 3)]:
        cache.put(key, value)
    assert cache.get("a") == 1
    cache.put("b", 20)
    assert cache.peek("c") == 3
    cache.put("d", 4)
    assert cache.keys() == ["a", "b", "d"]
    assert cache.get("zz", "dflt") == "dflt"
    assert cache.delete("zz") is False
    assert cache.delete("d") is True
    cache.put("e", None)
    cache.put("f", 6)
    cache.resize(1)
    assert cache.keys() == ["f"]
    cache.clear()
    assert evicted == [("c", 3), ("a", 1), ("b", 20), ("e", None)]
    assert cache.stats() == {"hits": 1, "misses": 1, "evictions": 4, "size": 0, "capacity": 1}
    with pytest.raises(ValueError):
        LRUCache(0)
