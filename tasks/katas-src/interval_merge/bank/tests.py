import pytest

import interval_merge
from interval_merge import contains, insert, intersect, merge, subtract, total_length


def covered(intervals, points):
    return [p for p in points if contains(intervals, p)]


def test_smoke_merge_single():
    assert merge([(0, 1)]) == [(0, 1)]


def test_smoke_total_length_single():
    assert total_length([(2, 7)]) == 5


def test_smoke_insert_into_empty():
    assert insert([], (3, 4)) == [(3, 4)]


def test_adjacent_chain_becomes_one():
    assert merge([(2, 3), (0, 1), (1, 2)]) == [(0, 3)]


def test_containing_interval_absorbs_later_small_ones():
    assert merge([(0, 100), (10, 20), (30, 40)]) == [(0, 100)]


def test_zero_width_intervals_vanish():
    assert merge([(1, 1)]) == []


def test_zero_width_interval_is_valid_input():
    assert insert([(0, 2)], (9, 9)) == [(0, 2)]


def test_cut_at_start_of_interval():
    assert subtract([(0, 6)], [(0, 2)]) == [(2, 6)]


def test_cut_at_end_of_interval():
    assert subtract([(0, 6)], [(4, 6)]) == [(0, 4)]


def test_touching_spans_do_not_intersect():
    assert intersect([(0, 2), (4, 6)], [(2, 4)]) == []


def test_one_long_interval_against_many_small():
    assert intersect([(0, 50)], [(1, 2), (10, 12), (40, 41)]) == [(1, 2), (10, 12), (40, 41)]


def test_end_point_not_contained():
    assert covered([(0, 2)], [0, 1, 2]) == [0, 1]


def test_start_point_of_second_interval_contained():
    assert contains([(0, 2), (5, 7)], 5)


def test_overlap_counted_once():
    assert total_length([(0, 10), (5, 15)]) == 15


def test_insert_reversed_rejected():
    with pytest.raises(ValueError):
        insert([(0, 3)], (9, 4))


def test_overfit_tie_keeps_first_end_value():
    result = merge([(0, 3.0), (1, 3)])
    assert type(result[0][1]) is float


def test_overfit_error_message_text():
    with pytest.raises(ValueError, match="is after its end"):
        merge([(2, 1)])


def test_overfit_internal_normalise_helper():
    assert interval_merge._normalise([(3, 4), (1, 2)]) == [(1, 2), (3, 4)]


def test_broken_touching_kept_apart():
    assert merge([(0, 1), (1, 2)]) == [(0, 1), (1, 2)]


def test_broken_end_inclusive():
    assert contains([(0, 5)], 5)


def test_broken_subtract_closed_cut():
    assert subtract([(0, 10)], [(3, 5)]) == [(0, 2), (6, 10)]
