import pytest

from tree_render import render

T, L, P, S = "\u251c\u2500\u2500 ", "\u2514\u2500\u2500 ", "\u2502   ", "    "

PROJECT = {"src": {"main.py": None, "util": {}}, "README": None, "tests": {"t.py": None}}


def test_spec_example():
    assert render("project", PROJECT) == "\n".join([
        "project",
        T + "src/",
        P + T + "main.py",
        P + L + "util/",
        T + "README",
        L + "tests/",
        S + L + "t.py",
    ])


def test_root_only():
    assert render("empty", {}) == "empty"


def test_single_leaf():
    assert render("r", {"x": None}) == "r\n" + L + "x"


def test_empty_branch_has_slash():
    assert render("r", {"d": {}, "f": None}) == "r\n" + T + "d/\n" + L + "f"


def test_deep_chain_prefixes():
    tree = {"a": {"b": {"c": {"d": None}}}, "z": None}
    assert render("r", tree).split("\n") == [
        "r",
        T + "a/",
        P + L + "b/",
        P + S + L + "c/",
        P + S + S + L + "d",
        L + "z",
    ]


def test_last_branch_children_use_blank_prefix():
    tree = {"first": None, "last": {"x": {"y": None}, "w": None}}
    assert render("r", tree).split("\n") == [
        "r", T + "first", L + "last/", S + T + "x/", S + P + L + "y", S + L + "w",
    ]


def test_insertion_order_kept_without_sort():
    assert render("r", {"b": None, "a": None, "C": None}).split("\n")[1:] == [T + "b", T + "a", L + "C"]


def test_sort_by_name_ignores_case():
    tree = {"beta": None, "Alpha": None, "gamma": {}, "Delta": None}
    assert render("r", tree, sort="name").split("\n")[1:] == [
        T + "Alpha", T + "beta", T + "Delta", L + "gamma/"]


def test_sort_by_name_tie_break_code_point():
    tree = {"b": None, "a": None, "B": None, "A": None}
    assert render("r", tree, sort="name").split("\n")[1:] == [T + "A", T + "a", T + "B", L + "b"]


def test_sort_by_lowercase_not_uppercase():
    tree = {"b": None, "_x": None, "A": None}
    assert render("r", tree, sort="name").split("\n")[1:] == [T + "_x", T + "A", L + "b"]


def test_sort_applies_at_every_level():
    tree = {"z": {"b": None, "a": None}, "y": None}
    assert render("r", tree, sort="name").split("\n")[1:] == [T + "y", L + "z/", S + T + "a", S + L + "b"]


def test_branches_first_keeps_input_order_in_groups():
    tree = {"f2": None, "d2": {}, "f1": None, "d1": {"x": None}}
    assert render("r", tree, branches_first=True).split("\n")[1:] == [
        T + "d2/", T + "d1/", P + L + "x", T + "f2", L + "f1"]


def test_branches_first_with_sort():
    tree = {"f2": None, "d2": {}, "f1": None, "D1": {}}
    assert render("r", tree, sort="name", branches_first=True).split("\n")[1:] == [
        T + "D1/", T + "d2/", T + "f1", L + "f2"]


def test_branches_first_nested():
    tree = {"top": {"leaf": None, "sub": {}}}
    assert render("r", tree, branches_first=True).split("\n")[1:] == [L + "top/", S + T + "sub/", S + L + "leaf"]


def test_max_depth_one_from_spec():
    assert render("project", PROJECT, max_depth=1).split("\n") == [
        "project", T + "src/ [+2]", T + "README", L + "tests/ [+1]"]


def test_max_depth_two():
    tree = {"a": {"b": {"c": None, "d": None, "e": {}}, "f": {}}}
    assert render("r", tree, max_depth=2).split("\n") == ["r", L + "a/", S + T + "b/ [+3]", S + L + "f/"]


def test_max_depth_deep_enough_shows_everything():
    assert render("project", PROJECT, max_depth=2) == render("project", PROJECT)
    assert render("project", PROJECT, max_depth=10) == render("project", PROJECT)


def test_max_depth_zero():
    assert render("project", PROJECT, max_depth=0) == "project [+3]"
    assert render("empty", {}, max_depth=0) == "empty"


def test_non_str_root_is_stringified():
    assert render(42, {"a": None}) == "42\n" + L + "a"


@pytest.mark.parametrize("children", [
    {"a": []},
    {"a": "leaf"},
    {1: None},
    {"a": {"b": 3}},
    {"a": {"b": {2: None}}},
    ["a"],
])
def test_bad_trees_are_type_errors(children):
    with pytest.raises(TypeError):
        render("r", children)


def test_bad_tree_below_max_depth_still_rejected():
    with pytest.raises(TypeError):
        render("r", {"a": {"b": {"c": 5}}}, max_depth=1)
    with pytest.raises(TypeError):
        render("r", {"a": {7: None}}, max_depth=1)


@pytest.mark.parametrize("kwargs, exc", [
    ({"sort": "size"}, ValueError),
    ({"sort": "NAME"}, ValueError),
    ({"max_depth": -1}, ValueError),
    ({"max_depth": True}, TypeError),
    ({"max_depth": 1.0}, TypeError),
    ({"max_depth": "2"}, TypeError),
])
def test_bad_options(kwargs, exc):
    with pytest.raises(exc):
        render("r", {"a": None}, **kwargs)
