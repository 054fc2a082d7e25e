import pytest

from tree_render import render

TEE = "\u251c\u2500\u2500 "
END = "\u2514\u2500\u2500 "
BAR = "\u2502   "
GAP = "    "


def rows(*args, **kwargs):
    return render(*args, **kwargs).split("\n")


def test_smoke_root_first():
    assert rows("home", {"a": None})[0] == "home"


def test_smoke_line_count():
    assert len(rows("home", {"a": None, "b": {"c": None}})) == 4


def test_smoke_returns_str():
    assert isinstance(render("x", {}), str)


def test_last_child_elbow():
    assert rows("etc", {"hosts": None, "passwd": None})[-1] == END + "passwd"


def test_nested_under_last_has_gap():
    assert rows("usr", {"lib": None, "bin": {"ls": None}})[-1] == GAP + END + "ls"


def test_empty_directory_slash():
    assert rows("tmp", {"cache": {}})[1] == END + "cache/"


def test_case_insensitive_order():
    assert rows("r", {"zeta": None, "Beta": None, "alpha": None}, sort="name")[1:] == [
        TEE + "alpha", TEE + "Beta", END + "zeta"]


def test_dirs_before_files():
    assert rows("r", {"file.txt": None, "docs": {}}, branches_first=True)[1:] == [TEE + "docs/", END + "file.txt"]


def test_depth_one_hides_grandchildren():
    assert rows("r", {"pkg": {"mod.py": None}}, max_depth=1) == ["r", END + "pkg/ [+1]"]


def test_hidden_count_is_direct_children():
    tree = {"pkg": {"a": {"x": None, "y": None}, "b": None}}
    assert rows("r", tree, max_depth=1)[1] == END + "pkg/ [+2]"


def test_root_summary_at_depth_zero():
    assert render("root", {"a": None, "b": None, "c": {}}, max_depth=0) == "root [+3]"


def test_no_suffix_for_empty_branch_at_limit():
    assert rows("r", {"e": {}}, max_depth=1)[1] == END + "e/"


def test_middle_branch_children_have_bar():
    assert rows("r", {"a": {"x": None}, "b": None})[2] == BAR + END + "x"


def test_overfit_error_message_for_sort():
    with pytest.raises(ValueError, match="sort must be None or 'name', got 'size'"):
        render("r", {}, sort="size")


def test_overfit_error_message_for_bad_node():
    with pytest.raises(TypeError, match="node 'a' must be a mapping or None, not int"):
        render("r", {"a": 1})


def test_broken_expects_root_with_slash():
    assert rows("r", {"a": None})[0] == "r/"


def test_broken_expects_ascii_connectors():
    assert rows("r", {"a": None})[1] == "`-- a"
