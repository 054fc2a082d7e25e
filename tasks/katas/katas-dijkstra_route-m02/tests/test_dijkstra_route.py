import math

import pytest

from dijkstra_route import Graph


def build(edges, nodes=()):
    g = Graph()
    for node in nodes:
        g.add_node(node)
    for u, v, w in edges:
        g.add_edge(u, v, w)
    return g


def route_length(g, path):
    return sum(g.weight(u, v) for u, v in zip(path, path[1:]))


CITY = [("a", "b", 4), ("a", "c", 1), ("c", "b", 2), ("b", "d", 5), ("c", "d", 9), ("d", "e", 1)]


def test_distances_basic():
    g = build(CITY, nodes=["z"])
    assert g.distances("a") == {"a": 0, "b": 3, "c": 1, "d": 8, "e": 9}


def test_distances_exclude_unreachable_and_upstream():
    g = build(CITY, nodes=["z"])
    assert g.distances("d") == {"d": 0, "e": 1}
    assert g.distances("z") == {"z": 0}


def test_distances_returns_new_dict():
    g = build(CITY)
    first = g.distances("a")
    first["a"] = 99
    assert g.distances("a")["a"] == 0


def test_shortest_path_reconstruction():
    g = build(CITY)
    assert g.shortest_path("a", "e") == (9, ["a", "c", "b", "d", "e"])


def test_shortest_path_to_itself():
    g = build(CITY)
    assert g.shortest_path("b", "b") == (0, ["b"])


def test_shortest_path_unreachable_is_none():
    g = build(CITY, nodes=["z"])
    assert g.shortest_path("a", "z") is None
    assert g.shortest_path("e", "a") is None


def test_direction_matters():
    g = build([("x", "y", 2)])
    assert g.shortest_path("x", "y") == (2, ["x", "y"])
    assert g.shortest_path("y", "x") is None


def test_unknown_nodes_raise_key_error():
    g = build(CITY)
    with pytest.raises(KeyError):
        g.distances("nope")
    with pytest.raises(KeyError):
        g.shortest_path("a", "nope")
    with pytest.raises(KeyError):
        g.shortest_path("nope", "a")
    with pytest.raises(KeyError):
        g.within("nope", 5)


def test_nodes_added_by_edges():
    g = build([("p", "q", 1)])
    assert g.has_node("p") and g.has_node("q") and not g.has_node("r")
    assert g.distances("q") == {"q": 0}


def test_parallel_edge_keeps_smaller_weight():
    g = build([("a", "b", 5), ("a", "b", 2), ("a", "b", 7)])
    assert g.weight("a", "b") == 2
    assert g.shortest_path("a", "b") == (2, ["a", "b"])


def test_weight_missing_edge_key_error():
    g = build([("a", "b", 1)])
    with pytest.raises(KeyError):
        g.weight("b", "a")


def test_zero_weights_allowed():
    g = build([("s", "t", 0), ("t", "u", 0), ("s", "u", 1)])
    assert g.distances("s") == {"s": 0, "t": 0, "u": 0}
    assert g.shortest_path("s", "u") == (0, ["s", "t", "u"])


def test_self_loop_and_cycle_do_not_shorten():
    g = build([("a", "a", 0), ("a", "b", 3), ("b", "a", 1), ("b", "c", 1)])
    assert g.distances("a") == {"a": 0, "b": 3, "c": 4}
    assert g.shortest_path("b", "a") == (1, ["b", "a"])


@pytest.mark.parametrize("weight", [-1, -0.5, math.inf, math.nan])
def test_invalid_weight_value(weight):
    g = Graph()
    with pytest.raises(ValueError):
        g.add_edge("a", "b", weight)
    assert not g.has_node("a") and not g.has_node("b")


@pytest.mark.parametrize("weight", ["3", None, True, [1]])
def test_invalid_weight_type(weight):
    g = Graph()
    with pytest.raises(TypeError):
        g.add_edge("a", "b", weight)
    assert not g.has_node("a")


def test_longer_route_with_fewer_hops_loses():
    g = build([(1, 2, 10), (1, 3, 1), (3, 4, 1), (4, 5, 1), (5, 2, 1)])
    assert g.shortest_path(1, 2) == (4, [1, 3, 4, 5, 2])


def test_late_discovered_shorter_route_updates_distance():
    g = build([("s", "a", 1), ("s", "b", 5), ("a", "c", 10), ("b", "c", 1), ("a", "b", 1)])
    assert g.distances("s") == {"s": 0, "a": 1, "b": 2, "c": 3}
    assert g.shortest_path("s", "c") == (3, ["s", "a", "b", "c"])


def test_mixed_incomparable_nodes():
    g = build([("a", 1, 2), ("a", (2, 3), 2), (1, None, 1), ((2, 3), None, 1)])
    dist = g.distances("a")
    assert dist == {"a": 0, 1: 2, (2, 3): 2, None: 3}
    d, path = g.shortest_path("a", None)
    assert d == 3 and path[0] == "a" and path[-1] is None and len(path) == 3


def test_tied_routes_return_a_valid_one():
    g = build([("a", "b", 1), ("a", "c", 1), ("b", "d", 1), ("c", "d", 1)])
    d, path = g.shortest_path("a", "d")
    assert d == 2 and path in (["a", "b", "d"], ["a", "c", "d"])
    assert route_length(g, path) == 2


def test_float_weights():
    g = build([("a", "b", 0.5), ("b", "c", 0.25), ("a", "c", 1.0)])
    assert g.shortest_path("a", "c") == (0.75, ["a", "b", "c"])


def test_within_inclusive_limit():
    g = build(CITY)
    assert g.within("a", 3) == {"a", "c", "b"}
    assert g.within("a", 2.99) == {"a", "c"}
    assert g.within("a", 0) == {"a"}
    assert g.within("a", -1) == set()
    assert g.within("a", 100) == {"a", "b", "c", "d", "e"}
