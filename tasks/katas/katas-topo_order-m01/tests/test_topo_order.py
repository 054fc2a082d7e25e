import pytest

from topo_order import CycleError, levels, topo_sort


def assert_valid_cycle(cycle, edges):
    edge_set = {tuple(e) for e in edges}
    assert len(cycle) >= 2 and cycle[0] == cycle[-1]
    body = cycle[:-1]
    assert len(set(body)) == len(body)
    assert cycle[0] == min(body)
    for u, v in zip(cycle, cycle[1:]):
        assert (u, v) in edge_set


def cycle_error(func, nodes, edges):
    with pytest.raises(CycleError) as info:
        func(nodes, edges)
    assert isinstance(info.value, ValueError)
    assert_valid_cycle(info.value.cycle, edges)
    return info.value


def test_spec_example_tie_break():
    assert topo_sort(["c", "b", "a"], [("c", "a")]) == ["b", "c", "a"]


def test_empty_graph():
    assert topo_sort([], []) == []
    assert levels([], []) == []


def test_isolated_nodes_sorted():
    assert topo_sort([3, 1, 2], []) == [1, 2, 3]


def test_nodes_from_edges_only():
    assert topo_sort([], [("x", "y"), ("w", "y")]) == ["w", "x", "y"]


def test_chain_overrides_value_order():
    assert topo_sort([], [(3, 2), (2, 1)]) == [3, 2, 1]


def test_smallest_ready_node_chosen_each_step():
    edges = [("a", "d"), ("b", "c"), ("d", "c")]
    assert topo_sort(["e"], edges) == ["a", "b", "d", "c", "e"]


def test_released_small_node_jumps_ahead():
    edges = [(5, 1), (5, 9)]
    assert topo_sort([2, 7], edges) == [2, 5, 1, 7, 9]


def test_duplicates_count_once():
    edges = [("a", "b"), ("a", "b"), ["a", "b"]]
    assert topo_sort(["a", "a", "b"], edges) == ["a", "b"]
    assert levels(["b"], edges) == [["a"], ["b"]]


def test_inputs_not_modified():
    nodes = ["b", "a"]
    edges = [("a", "b")]
    topo_sort(nodes, edges)
    levels(nodes, edges)
    assert nodes == ["b", "a"] and edges == [("a", "b")]


def test_accepts_generators():
    assert topo_sort((n for n in "cab"), ((u, v) for u, v in [("c", "a")])) == ["b", "c", "a"]


@pytest.mark.parametrize("bad", [("a",), ("a", "b", "c"), "ab", 5, None])
def test_bad_edge_type_error(bad):
    with pytest.raises(TypeError):
        topo_sort([], [("x", "y"), bad])


def test_levels_spec_example():
    assert levels("abcd", [("a", "b"), ("b", "c"), ("a", "c")]) == [["a", "d"], ["b"], ["c"]]


def test_levels_use_longest_path():
    edges = [(1, 2), (2, 3), (3, 4), (1, 4), (0, 4)]
    assert levels([], edges) == [[0, 1], [2], [3], [4]]


def test_levels_sorted_within_level():
    edges = [("r", "z"), ("r", "b"), ("r", "m")]
    assert levels(["q"], edges) == [["q", "r"], ["b", "m", "z"]]


def test_self_loop_is_cycle():
    err = cycle_error(topo_sort, ["a"], [("b", "b")])
    assert err.cycle == ["b", "b"]
    assert err.remaining == ["b"]


def test_two_cycle_with_downstream_node():
    edges = [("a", "b"), ("b", "c"), ("c", "b"), ("c", "d")]
    err = cycle_error(topo_sort, ["e"], edges)
    assert err.cycle == ["b", "c", "b"]
    assert err.remaining == ["b", "c", "d"]


def test_cycle_rotated_to_smallest_node():
    edges = [(5, 3), (3, 8), (8, 5), (0, 5)]
    err = cycle_error(topo_sort, [], edges)
    assert err.cycle == [3, 8, 5, 3]
    assert err.remaining == [3, 5, 8]


def test_levels_raise_cycle_error_too():
    edges = [("x", "y"), ("y", "x"), ("a", "x")]
    err = cycle_error(levels, [], edges)
    assert err.cycle == ["x", "y", "x"]
    assert err.remaining == ["x", "y"]


def test_remaining_excludes_orderable_nodes():
    edges = [(1, 2), (2, 3), (3, 2), (4, 5), (3, 6), (6, 7)]
    err = cycle_error(topo_sort, [0], edges)
    assert err.remaining == [2, 3, 6, 7]


def test_several_cycles_any_valid_one():
    edges = [(1, 2), (2, 1), (3, 4), (4, 5), (5, 3)]
    err = cycle_error(topo_sort, [], edges)
    assert err.remaining == [1, 2, 3, 4, 5]
    assert set(err.cycle) in ({1, 2}, {3, 4, 5})


def test_long_cycle_reported_completely():
    edges = [(i, i + 1) for i in range(1, 6)] + [(6, 1)]
    err = cycle_error(topo_sort, [], edges)
    assert err.cycle == [1, 2, 3, 4, 5, 6, 1]


def test_levels_sorted_even_when_released_late():
    assert levels([], [("x", "a"), ("b", "c")]) == [["b", "x"], ["a", "c"]]


def test_cycle_found_behind_another_cycle_is_rotated():
    edges = [(1, 4), (4, 8), (8, 6), (6, 5), (5, 8), (1, 9), (9, 1)]
    err = cycle_error(topo_sort, [], edges)
    assert err.remaining == [1, 4, 5, 6, 8, 9]


def test_cycle_reached_after_finished_dead_end():
    edges = [(5, 9), (9, 5), (5, 3), (9, 3)]
    err = cycle_error(topo_sort, [], edges)
    assert err.cycle == [5, 9, 5]
    assert err.remaining == [3, 5, 9]


def test_deep_and_shallow_predecessor():
    edges = [("a", "b"), ("b", "c"), ("c", "d"), ("z", "d")]
    assert levels([], edges) == [["a", "z"], ["b"], ["c"], ["d"]]
    assert topo_sort([], edges) == ["a", "b", "c", "z", "d"]
