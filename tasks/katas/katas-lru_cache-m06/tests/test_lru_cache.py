import pytest

from lru_cache import LRUCache


def filled(capacity, keys):
    cache = LRUCache(capacity)
    for i, key in enumerate(keys):
        cache.put(key, i)
    return cache


def test_put_then_get_returns_value():
    cache = LRUCache(2)
    assert cache.put("k", "v") is None
    assert cache.get("k") == "v"


def test_get_absent_returns_default():
    cache = LRUCache(2)
    assert cache.get("nope") is None
    assert cache.get("nope", 42) == 42


def test_full_cache_evicts_least_recent_insert():
    cache = filled(3, "abcd")
    assert cache.keys() == ["b", "c", "d"]
    assert "a" not in cache
    assert len(cache) == 3


def test_no_eviction_while_not_over_capacity():
    cache = filled(3, "abc")
    assert len(cache) == 3
    assert cache.keys() == ["a", "b", "c"]
    assert cache.stats()["evictions"] == 0
    cache2 = filled(3, "ab")
    assert cache2.keys() == ["a", "b"]


def test_get_refreshes_recency():
    cache = filled(3, "abc")
    assert cache.get("a") == 0
    cache.put("d", 3)
    assert cache.keys() == ["c", "a", "d"]
    assert cache.peek("b") is None


def test_put_update_refreshes_recency_and_value():
    cache = filled(2, "ab")
    cache.put("a", 100)
    assert cache.keys() == ["b", "a"]
    cache.put("c", 5)
    assert cache.keys() == ["a", "c"]
    assert cache.get("a") == 100


def test_put_update_on_full_cache_does_not_evict():
    cache = filled(2, "xy")
    cache.put("x", "new")
    assert len(cache) == 2
    assert cache.stats()["evictions"] == 0
    assert cache.keys() == ["y", "x"]
    assert cache.peek("y") == 1
    assert cache.stats() == {"hits": 0, "misses": 0, "evictions": 0, "size": 2, "capacity": 2}


def test_capacity_one():
    cache = LRUCache(1)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.keys() == ["b"]
    assert cache.stats()["evictions"] == 1


@pytest.mark.parametrize("bad", [0, -1, -10])
def test_capacity_below_one_rejected(bad):
    with pytest.raises(ValueError):
        LRUCache(bad)


def test_hit_and_miss_counters():
    cache = filled(3, "ab")
    cache.get("a")
    cache.get("a")
    cache.get("q")
    stats = cache.stats()
    assert stats["hits"] == 2
    assert stats["misses"] == 1


def test_stats_has_exact_keys_and_values():
    cache = filled(4, "abcdef")
    assert cache.stats() == {"hits": 0, "misses": 0, "evictions": 2, "size": 4, "capacity": 4}
    cache.delete("e")
    assert cache.stats()["size"] == 3


def test_delete_present_and_absent():
    cache = filled(3, "ab")
    assert cache.delete("a") is True
    assert "a" not in cache
    assert cache.delete("a") is False
    assert cache.delete("never") is False
    assert cache.keys() == ["b"]


def test_delete_entry_whose_value_is_none():
    cache = LRUCache(2)
    cache.put("n", None)
    assert "n" in cache
    assert cache.delete("n") is True
    assert "n" not in cache


def test_none_value_is_a_hit():
    cache = LRUCache(2)
    cache.put("n", None)
    assert cache.get("n", "default") is None
    assert cache.stats()["hits"] == 1


def test_peek_has_no_side_effects():
    cache = filled(2, "ab")
    assert cache.peek("a") == 0
    assert cache.peek("zz") is None
    assert cache.peek("zz", "d") == "d"
    cache.put("c", 2)
    assert cache.keys() == ["b", "c"]
    assert cache.stats()["hits"] == 0
    assert cache.stats()["misses"] == 0


def test_contains_and_len_do_not_change_recency():
    cache = filled(2, "ab")
    assert "a" in cache
    assert len(cache) == 2
    cache.put("c", 2)
    assert "a" not in cache


def test_on_evict_receives_key_and_value_in_order():
    seen = []
    cache = LRUCache(2, on_evict=lambda k, v: seen.append((k, v)))
    for key, value in [("a", 1), ("b", 2), ("c", 3), ("d", 4)]:
        cache.put(key, value)
    assert seen == [("a", 1), ("b", 2)]


def test_on_evict_not_called_for_delete_or_clear():
    seen = []
    cache = LRUCache(3, on_evict=lambda k, v: seen.append(k))
    cache.put("a", 1)
    cache.put("b", 2)
    cache.delete("a")
    cache.clear()
    assert seen == []


def test_resize_shrink_evicts_several_in_lru_order():
    seen = []
    cache = LRUCache(5, on_evict=lambda k, v: seen.append(k))
    for i, key in enumerate("abcde"):
        cache.put(key, i)
    cache.get("a")
    cache.resize(2)
    assert cache.keys() == ["e", "a"]
    assert seen == ["b", "c", "d"]
    assert cache.stats()["evictions"] == 3
    assert cache.stats()["capacity"] == 2


def test_resize_grow_keeps_entries():
    cache = filled(2, "ab")
    cache.resize(4)
    cache.put("c", 2)
    cache.put("d", 3)
    assert cache.keys() == ["a", "b", "c", "d"]
    assert cache.stats()["evictions"] == 0


def test_resize_invalid_leaves_cache_unchanged():
    cache = filled(3, "abc")
    with pytest.raises(ValueError):
        cache.resize(0)
    assert cache.keys() == ["a", "b", "c"]
    assert cache.stats()["capacity"] == 3


def test_clear_keeps_statistics():
    cache = filled(1, "ab")
    cache.get("b")
    cache.get("a")
    cache.clear()
    assert len(cache) == 0
    assert cache.keys() == []
    assert cache.stats() == {"hits": 1, "misses": 1, "evictions": 1, "size": 0, "capacity": 1}


def test_keys_returns_independent_list():
    cache = filled(3, "ab")
    keys = cache.keys()
    keys.append("zzz")
    assert cache.keys() == ["a", "b"]
