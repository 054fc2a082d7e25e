import pytest

from interval_merge import contains, insert, intersect, merge, subtract, total_length


def test_merge_example():
    assert merge([(5, 8), (1, 3), (2, 4), (8, 9), (10, 10)]) == [(1, 4), (5, 9)]


def test_merge_touching_intervals_combine():
    assert merge([(3, 5), (1, 3)]) == [(1, 5)]


def test_merge_keeps_gaps():
    assert merge([(1, 2), (3, 4)]) == [(1, 2), (3, 4)]


def test_merge_nested_interval_keeps_outer_end():
    assert merge([(1, 10), (2, 3), (4, 5)]) == [(1, 10)]


def test_merge_drops_empty_and_handles_empty_input():
    assert merge([]) == []
    assert merge([(4, 4), (7, 7)]) == []
    assert merge([(2, 2), (1, 3)]) == [(1, 3)]


def test_merge_accepts_lists_and_returns_tuples():
    result = merge([[2, 6], [0, 1]])
    assert result == [(0, 1), (2, 6)]
    assert all(type(pair) is tuple for pair in result)


def test_merge_does_not_modify_input():
    data = [(5, 9), (1, 6)]
    merge(data)
    assert data == [(5, 9), (1, 6)]


def test_merge_floats_and_negative():
    assert merge([(-2.5, 0), (0, 1.5), (-5, -3)]) == [(-5, -3), (-2.5, 1.5)]


def test_merge_accepts_generator():
    assert merge((i, i + 1) for i in range(3)) == [(0, 3)]


@pytest.mark.parametrize("bad", [[(1, 2, 3)], [(1,)], [5], [("a", 2)], [(True, 2)], [(1, None)]])
def test_merge_type_errors(bad):
    with pytest.raises(TypeError):
        merge(bad)


def test_reversed_interval_value_error():
    with pytest.raises(ValueError):
        merge([(1, 2), (5, 3)])
    with pytest.raises(ValueError):
        insert([], (2, 1))
    with pytest.raises(ValueError):
        subtract([(0, 5)], [(3, 2)])


def test_insert_bridges_two_intervals():
    assert insert([(1, 2), (6, 9)], (2, 6)) == [(1, 9)]


def test_insert_into_gap_and_at_ends():
    assert insert([(1, 2), (6, 9)], (3, 4)) == [(1, 2), (3, 4), (6, 9)]
    assert insert([(1, 2)], (-3, -1)) == [(-3, -1), (1, 2)]
    assert insert([(1, 2)], (5, 5)) == [(1, 2)]


def test_insert_validates_new():
    with pytest.raises(TypeError):
        insert([(1, 2)], (1, 2, 3))


def test_subtract_middle():
    assert subtract([(1, 10)], [(3, 5)]) == [(1, 3), (5, 10)]


def test_subtract_edges_half_open():
    assert subtract([(1, 10)], [(1, 4)]) == [(4, 10)]
    assert subtract([(1, 10)], [(7, 10)]) == [(1, 7)]
    assert subtract([(1, 10)], [(10, 12)]) == [(1, 10)]
    assert subtract([(1, 10)], [(-5, 1)]) == [(1, 10)]


def test_subtract_everything_and_nothing():
    assert subtract([(2, 4)], [(0, 10)]) == []
    assert subtract([(2, 4), (1, 3)], []) == [(1, 4)]


def test_subtract_one_cut_spanning_several_intervals():
    assert subtract([(0, 10), (20, 30)], [(5, 25), (28, 29)]) == [(0, 5), (25, 28), (29, 30)]


def test_subtract_several_cuts_in_one_interval_unsorted():
    assert subtract([(0, 20)], [(15, 16), (2, 3), (2, 4), (9, 9)]) == [(0, 2), (4, 15), (16, 20)]


def test_intersect_example_and_touching():
    assert intersect([(1, 5), (8, 12)], [(3, 9)]) == [(3, 5), (8, 9)]
    assert intersect([(1, 3)], [(3, 5)]) == []


def test_intersect_many_pieces():
    a = [(0, 4), (6, 10), (12, 20)]
    b = [(2, 7), (9, 13), (15, 16), (19, 25)]
    assert intersect(a, b) == [(2, 4), (6, 7), (9, 10), (12, 13), (15, 16), (19, 20)]
    assert intersect(b, a) == intersect(a, b)


def test_intersect_unnormalised_inputs_merge_result():
    assert intersect([(0, 5), (5, 10)], [(3, 7)]) == [(3, 7)]


def test_contains_half_open():
    spans = [(1, 3), (5, 8)]
    assert contains(spans, 1)
    assert contains(spans, 2.999)
    assert not contains(spans, 3)
    assert not contains(spans, 0)
    assert contains(spans, 7)
    assert not contains(spans, 8)
    assert not contains([], 0)


def test_contains_overlapping_unsorted_input():
    assert contains([(5, 9), (0, 6)], 8)
    assert not contains([(4, 4)], 4)


def test_contains_point_type():
    with pytest.raises(TypeError):
        contains([(0, 1)], "0")
    with pytest.raises(TypeError):
        contains([(0, 1)], False)


def test_total_length():
    assert total_length([(1, 4), (2, 6), (10, 11)]) == 6
    assert total_length([]) == 0
    assert total_length([(3, 3)]) == 0
    assert total_length([(0, 0.5), (0.25, 1.5)]) == 1.5


def test_merge_small_float_gap_kept():
    assert merge([(0, 1), (1.5, 2)]) == [(0, 1), (1.5, 2)]


def test_reversed_float_interval_rejected():
    with pytest.raises(ValueError):
        merge([(3.5, 3)])


def test_subtract_leaves_unit_pieces():
    assert subtract([(0, 10)], [(1, 5)]) == [(0, 1), (5, 10)]
    assert subtract([(0, 10)], [(0, 9)]) == [(9, 10)]


def test_intersect_disjoint_unions_is_empty():
    assert intersect([(0, 1)], [(5, 6)]) == []
    assert intersect([(0, 1), (8, 9)], [(3, 4)]) == []
    assert intersect([], [(0, 5)]) == []
