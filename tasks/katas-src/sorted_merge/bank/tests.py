import math

import pytest

from sorted_merge import merge


def limit(n, k):
    return 2 * n * (math.ceil(math.log2(k)) + 1)


def test_smoke_two_lists():
    assert merge([[1], [0]]).items == [0, 1]


def test_smoke_result_has_comparisons():
    assert merge([[1, 2], [3]]).comparisons >= 0


def test_smoke_empty():
    assert merge([]).items == []


def test_strings_merge():
    assert merge([["apple", "fig"], ["banana", "cherry", "grape"]]).items == [
        "apple", "banana", "cherry", "fig", "grape"]


def test_equal_keys_follow_input_order():
    r = merge([[(5, "first")], [(5, "second")], [(5, "third")]], key=lambda t: t[0])
    assert [t[1] for t in r.items] == ["first", "second", "third"]


def test_first_list_long_tail_survives():
    assert merge([[0, 50, 60, 70], [10, 20]]).items == [0, 10, 20, 50, 60, 70]


def test_last_element_of_left_run_placed_correctly():
    assert merge([[4, 9], [5, 6, 7]]).items == [4, 5, 6, 7, 9]


def test_descending_first_pair_rejected():
    with pytest.raises(ValueError):
        merge([[10], [7, 3]])


def test_duplicates_inside_one_input_allowed():
    assert merge([[2, 2, 3], [1]]).items == [1, 2, 2, 3]


def test_lambda_key_accepted():
    assert merge([[1, 2], [3]], key=lambda v: v * 10).items == [1, 2, 3]


def test_count_includes_merge_work():
    r = merge([[1, 3, 5, 7], [2, 4, 6, 8]])
    assert r.comparisons >= 6 + 7


def test_bound_holds_for_32_lists():
    lists = [[j * 32 + i for j in range(5)] for i in range(32)]
    r = merge(lists)
    assert r.items == list(range(160))
    assert r.comparisons <= limit(160, 32)


def test_many_lists_ties_stay_stable():
    lists = [[(k, i) for k in (1, 2)] for i in range(6)]
    r = merge(lists, key=lambda t: t[0])
    assert r.items == [(1, i) for i in range(6)] + [(2, i) for i in range(6)]


def test_overfit_exact_count_for_three_lists():
    r = merge([[1, 4], [2, 5], [3, 6]])
    assert r.comparisons == 10


def test_overfit_error_message_names_position():
    with pytest.raises(ValueError, match="not sorted at position 2"):
        merge([[1, 2, 0]])


def test_broken_expects_duplicates_removed():
    assert merge([[1, 2], [2, 3]]).items == [1, 2, 3]


def test_broken_expects_unsorted_input_sorted():
    assert merge([[3, 1, 2]]).items == [1, 2, 3]
