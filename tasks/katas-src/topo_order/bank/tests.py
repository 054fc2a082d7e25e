import pytest

from topo_order import CycleError, levels, topo_sort


def caught(func, nodes, edges):
    try:
        func(nodes, edges)
    except CycleError as exc:
        return exc
    return None


def test_smoke_single_edge():
    assert topo_sort([], [("a", "b")]) == ["a", "b"]


def test_smoke_levels_single_node():
    assert levels(["n"], []) == [["n"]]


def test_smoke_returns_list():
    assert isinstance(topo_sort([1], []), list)


def test_numbers_ordered_smallest_first():
    assert topo_sort([9, 4], [(8, 1)]) == [4, 8, 1, 9]


def test_join_node_waits_for_both_parents():
    assert topo_sort([], [(1, 5), (9, 5)]) == [1, 9, 5]


def test_fan_in_of_three():
    order = topo_sort([], [("p", "t"), ("q", "t"), ("r", "t")])
    assert order == ["p", "q", "r", "t"]


def test_self_loop_with_other_nodes_raises():
    err = caught(topo_sort, ["a", "b"], [("c", "c")])
    assert err is not None and err.remaining == ["c"]


def test_self_loop_cycle_closes():
    err = caught(topo_sort, [], [(4, 4)])
    assert err.cycle == [4, 4]


def test_remaining_sorted_numbers():
    err = caught(topo_sort, [], [(9, 2), (2, 9), (0, 9)])
    assert err.remaining == [2, 9]


def test_cycle_starts_with_smallest():
    err = caught(topo_sort, [], [(7, 3), (3, 5), (5, 7)])
    assert err.cycle == [3, 5, 7, 3]


def test_cycle_found_after_dead_end_branch():
    err = caught(levels, [], [("m", "x"), ("x", "m"), ("m", "a"), ("x", "a")])
    assert err.cycle == ["m", "x", "m"]


def test_reported_cycle_begins_at_its_minimum():
    edges = [(0, 2), (2, 7), (7, 4), (4, 3), (3, 7), (0, 9), (9, 0)]
    err = caught(topo_sort, [], edges)
    body = err.cycle[:-1]
    assert err.cycle[0] == min(body)


def test_levels_longest_path_wins():
    assert levels([], [(1, 2), (2, 3), (9, 3)]) == [[1, 9], [2], [3]]


def test_levels_late_shallow_parent():
    assert levels([], [("a", "b"), ("b", "c"), ("y", "c")]) == [["a", "y"], ["b"], ["c"]]


def test_overfit_cycle_prefers_depth_first_route():
    err = caught(topo_sort, [], [(1, 2), (2, 3), (3, 1), (1, 5), (5, 1)])
    assert err.cycle == [1, 2, 3, 1]


def test_overfit_error_message_arrows():
    err = caught(topo_sort, [], [("a", "b"), ("b", "a")])
    assert str(err) == "dependency cycle: a -> b -> a"


def test_overfit_type_error_message():
    with pytest.raises(TypeError, match="must be a"):
        topo_sort([], [("a",)])


def test_broken_largest_first():
    assert topo_sort(["a", "b", "c"], []) == ["c", "b", "a"]


def test_broken_remaining_includes_everything():
    err = caught(topo_sort, ["z"], [("a", "a")])
    assert err.remaining == ["a", "z"]


def test_broken_levels_shortest_path():
    assert levels([], [(1, 2), (2, 3), (1, 3)]) == [[1], [2, 3]]
