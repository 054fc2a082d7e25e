import dataclasses
import math
import operator

import pytest

from sorted_merge import MergeResult, merge


def bound(n, k):
    return 2 * n * (math.ceil(math.log2(k)) + 1)


def test_basic_merge():
    r = merge([[1, 4, 9], [2, 3], [], [5]])
    assert r.items == [1, 2, 3, 4, 5, 9]
    assert isinstance(r, MergeResult)


def test_result_is_frozen_dataclass():
    r = merge([[1], [2]])
    assert dataclasses.is_dataclass(r)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.items = []


def test_no_inputs_and_only_empty_inputs():
    for lists in ([], [[]], [[], [], []]):
        r = merge(lists)
        assert r.items == []
        assert r.comparisons == 0


def test_single_input_is_copied_and_counts_m_minus_one():
    data = [1, 1, 2, 5, 8]
    r = merge([data])
    assert r.items == data
    assert r.items is not data
    assert r.comparisons == 4


def test_single_non_empty_among_empties():
    r = merge([[], [3, 4, 5], []])
    assert r.items == [3, 4, 5]
    assert r.comparisons == 2


def test_inputs_are_not_modified():
    a, b = [1, 3, 5], [2, 4]
    merge([a, b])
    assert a == [1, 3, 5] and b == [2, 4]


def test_accepts_tuples_and_generators():
    r = merge([(1, 5), (x for x in [2, 3]), iter([0])])
    assert r.items == [0, 1, 2, 3, 5]


def test_two_lists_one_exhausted_early():
    assert merge([[10, 11, 12], [1, 2]]).items == [1, 2, 10, 11, 12]
    assert merge([[1, 2], [10, 11, 12]]).items == [1, 2, 10, 11, 12]


def test_longer_tail_in_first_list():
    assert merge([[1, 7, 8, 9], [2, 3]]).items == [1, 2, 3, 7, 8, 9]
    assert merge([[5, 6], [1, 2, 3, 4]]).items == [1, 2, 3, 4, 5, 6]


def test_many_lists_match_sorted():
    lists = [sorted((i * 31 + j * 17) % 97 for j in range(i % 5 + 1)) for i in range(23)]
    expected = sorted(v for lst in lists for v in lst)
    assert merge(lists).items == expected


def test_stable_across_lists():
    lists = [[(1, "a0"), (2, "a1")], [(1, "b0"), (2, "b1")], [(1, "c0")]]
    r = merge(lists, key=lambda p: p[0])
    assert [p[1] for p in r.items] == ["a0", "b0", "c0", "a1", "b1"]


def test_stable_across_many_lists_with_all_equal_keys():
    lists = [[(0, i, j) for j in range(2)] for i in range(9)]
    r = merge(lists, key=lambda t: t[0])
    assert r.items == [(0, i, j) for i in range(9) for j in range(2)]


def test_stable_within_a_list():
    r = merge([[("x", 1), ("y", 1), ("z", 2)], [("w", 1)]], key=lambda p: p[1])
    assert [p[0] for p in r.items] == ["x", "y", "w", "z"]


def test_key_function_is_used():
    r = merge([["c", "bb"], ["a", "dddd"]], key=len)
    assert r.items == ["c", "a", "bb", "dddd"]


def test_key_descending_via_negation():
    r = merge([[9, 5, 1], [8, 2]], key=lambda v: -v)
    assert r.items == [9, 8, 5, 2, 1]


def test_callable_objects_as_keys():
    r = merge([[(2, "a"), (5, "b")], [(1, "c")]], key=operator.itemgetter(0))
    assert [p[1] for p in r.items] == ["c", "a", "b"]

    class Negate:
        def __call__(self, v):
            return -v

        def __len__(self):  # a falsy callable is still a key
            return 0

    assert merge([[3, 2], [4, 1]], key=Negate()).items == [4, 3, 2, 1]


def test_interleaved_merge_counts_every_needed_comparison():
    m = 20
    r = merge([list(range(1, 2 * m, 2)), list(range(2, 2 * m + 1, 2))])
    assert r.items == list(range(1, 2 * m + 1))
    assert r.comparisons >= (2 * m - 1) + (2 * m - 2)


@pytest.mark.parametrize("bad_key", [5, "len", [len]])
def test_non_callable_key_is_type_error(bad_key):
    with pytest.raises(TypeError):
        merge([[1], [2]], key=bad_key)
    with pytest.raises(TypeError):
        merge([], key=bad_key)


def test_unsorted_input_is_value_error():
    with pytest.raises(ValueError):
        merge([[1, 2], [3, 1]])


def test_unsorted_at_first_pair():
    with pytest.raises(ValueError):
        merge([[2, 1, 3]])
    with pytest.raises(ValueError):
        merge([[0], [5, 4, 6, 7]])


def test_unsorted_at_end():
    with pytest.raises(ValueError):
        merge([[1, 2, 3, 2]])


def test_equal_neighbours_are_sorted():
    assert merge([[1, 1, 1], [1, 1]]).items == [1] * 5


def test_unsorted_by_key_only():
    with pytest.raises(ValueError):
        merge([["aaa", "b"]], key=len)
    assert merge([["b", "aaa"]], key=len).items == ["b", "aaa"]


def test_comparisons_lower_bound_with_two_lists():
    r = merge([[1, 2, 3], [4, 5]])
    assert r.comparisons >= 5 - 2 + 1


def test_comparisons_lower_bound_singletons():
    r = merge([[3], [1], [2]])
    assert r.items == [1, 2, 3]
    assert r.comparisons >= 1


@pytest.mark.parametrize("k", [2, 3, 5, 8, 16])
def test_comparison_bound_small_k(k):
    lists = [list(range(i, 60, k)) for i in range(k)]
    r = merge(lists)
    n = sum(len(x) for x in lists)
    assert r.items == list(range(60))
    assert n - k + 1 <= r.comparisons <= bound(n, k)


def test_comparison_bound_many_short_lists():
    k = 64
    lists = [[i, i + 100, i + 200, i + 300] for i in range(k)]
    r = merge(lists)
    n = 4 * k
    assert r.items == sorted(v for lst in lists for v in lst)
    assert r.comparisons <= bound(n, k)


def test_comparison_bound_skewed_lengths():
    lists = [list(range(500))] + [[i] for i in range(0, 500, 10)]
    r = merge(lists)
    n = 500 + 50
    assert r.comparisons <= bound(n, 51)
    assert r.items == sorted(v for lst in lists for v in lst)
