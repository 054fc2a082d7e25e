import math

import pytest

from dijkstra_route import Graph


def graph_of(*edges):
    g = Graph()
    for u, v, w in edges:
        g.add_edge(u, v, w)
    return g


def test_smoke_single_edge_distance():
    assert graph_of(("u", "v", 3)).distances("u") == {"u": 0, "v": 3}


def test_smoke_has_node_after_add_node():
    g = Graph()
    g.add_node("k")
    assert g.has_node("k")


def test_smoke_source_distance_zero():
    assert graph_of((1, 2, 7)).distances(1)[1] == 0


def test_zero_cost_edge_accepted():
    g = graph_of(("p", "q", 0))
    assert g.distances("p") == {"p": 0, "q": 0}


def test_cheaper_duplicate_edge_wins_regardless_of_order():
    g = graph_of(("m", "n", 1), ("m", "n", 6))
    assert g.weight("m", "n") == 1


def test_target_only_node_exists():
    g = graph_of(("from", "to", 2))
    assert g.has_node("to")


def test_rejected_edge_leaves_graph_empty():
    g = Graph()
    with pytest.raises(ValueError):
        g.add_edge("x", "y", -5)
    assert not g.has_node("x")


def test_two_hop_sum():
    g = graph_of(("a", "b", 2), ("b", "c", 3))
    assert g.distances("a")["c"] == 5


def test_detour_beats_heavy_direct_edge():
    g = graph_of(("s", "t", 100), ("s", "m", 1), ("m", "n", 1), ("n", "t", 1))
    assert g.shortest_path("s", "t") == (3, ["s", "m", "n", "t"])


def test_improved_route_updates_distance_and_path():
    g = graph_of(("o", "p", 1), ("o", "q", 9), ("p", "q", 1), ("q", "r", 1), ("p", "r", 20))
    assert g.shortest_path("o", "r") == (3, ["o", "p", "q", "r"])


def test_path_starts_at_source():
    d, path = graph_of(("h", "i", 1), ("i", "j", 1)).shortest_path("h", "j")
    assert path[0] == "h" and path[-1] == "j"


def test_unreachable_target_none():
    g = graph_of(("a", "b", 1))
    g.add_node("island")
    assert g.shortest_path("a", "island") is None


def test_within_limit_is_inclusive():
    g = graph_of(("a", "b", 2), ("b", "c", 2))
    assert g.within("a", 4) == {"a", "b", "c"}


def test_overfit_tie_goes_to_first_popped_node():
    g = graph_of(("b", "d", 1), ("c", "d", 1), ("a", "c", 1), ("a", "b", 1))
    assert g.shortest_path("a", "d") == (2, ["a", "c", "d"])


def test_overfit_error_message():
    with pytest.raises(ValueError, match="finite and >= 0"):
        Graph().add_edge("a", "b", -2)


def test_overfit_internal_adjacency_dict():
    g = graph_of(("a", "b", 1))
    assert g._adj == {"a": {"b": 1}, "b": {}}


def test_broken_unreachable_is_infinite():
    g = graph_of(("a", "b", 1))
    g.add_node("c")
    assert g.shortest_path("a", "c") == (math.inf, [])


def test_broken_fewest_hops_preferred():
    g = graph_of(("s", "t", 10), ("s", "u", 1), ("u", "t", 1))
    assert g.shortest_path("s", "t") == (10, ["s", "t"])


def test_broken_unknown_source_returns_empty():
    assert graph_of(("a", "b", 1)).distances("zzz") == {}
