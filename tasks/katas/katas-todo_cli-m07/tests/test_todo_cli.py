import json

import pytest

from todo_cli import main


@pytest.fixture
def db(tmp_path):
    return str(tmp_path / "todo.json")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_add_prints_id_and_text(capsys, db):
    assert run(capsys, "--db", db, "add", "buy", "milk") == (0, "added #1: buy milk\n", "")
    assert run(capsys, "--db", db, "add", "call mum") == (0, "added #2: call mum\n", "")


def test_add_strips_and_joins_words(capsys, db):
    code, out, _ = run(capsys, "--db", db, "add", "  water ", "plants  ")
    assert code == 0
    assert out == "added #1: water  plants\n"


def test_list_open_items_with_summary(capsys, db):
    run(capsys, "--db", db, "add", "a")
    run(capsys, "--db", db, "add", "b", "--priority", "high")
    run(capsys, "--db", db, "add", "c", "--priority", "low")
    code, out, err = run(capsys, "--db", db, "list")
    assert code == 0 and err == ""
    assert out == "#1 [ ] a\n#2 [ ] b (high)\n#3 [ ] c (low)\n3 open, 0 done\n"


def test_list_hides_done_unless_all(capsys, db):
    for text in ("one", "two", "three"):
        run(capsys, "--db", db, "add", text)
    assert run(capsys, "--db", db, "done", "2") == (0, "done #2: two\n", "")
    assert run(capsys, "--db", db, "list")[1] == "#1 [ ] one\n#3 [ ] three\n2 open, 1 done\n"
    assert run(capsys, "--db", db, "list", "--all")[1] == (
        "#1 [ ] one\n#2 [x] two\n#3 [ ] three\n2 open, 1 done\n")


def test_priority_filter_keeps_full_summary(capsys, db):
    run(capsys, "--db", db, "add", "x", "--priority", "high")
    run(capsys, "--db", db, "add", "y")
    run(capsys, "--db", db, "add", "z", "--priority", "high")
    run(capsys, "--db", db, "done", "3")
    assert run(capsys, "--db", db, "list", "--priority", "high")[1] == "#1 [ ] x (high)\n2 open, 1 done\n"
    assert run(capsys, "--db", db, "list", "--all", "--priority", "high")[1] == (
        "#1 [ ] x (high)\n#3 [x] z (high)\n2 open, 1 done\n")
    assert run(capsys, "--db", db, "list", "--priority", "low")[1] == "2 open, 1 done\n"


def test_list_on_missing_file_is_empty_and_not_created(capsys, db, tmp_path):
    assert run(capsys, "--db", db, "list") == (0, "0 open, 0 done\n", "")
    assert not (tmp_path / "todo.json").exists()


def test_list_does_not_rewrite_file(capsys, db, tmp_path):
    run(capsys, "--db", db, "add", "keep")
    path = tmp_path / "todo.json"
    before = path.read_bytes()
    mtime = path.stat().st_mtime_ns
    run(capsys, "--db", db, "list", "--all")
    assert path.read_bytes() == before
    assert path.stat().st_mtime_ns == mtime


def test_file_is_json(capsys, db, tmp_path):
    run(capsys, "--db", db, "add", "json please")
    json.loads((tmp_path / "todo.json").read_text())


def test_ids_are_never_reused(capsys, db):
    run(capsys, "--db", db, "add", "a")
    run(capsys, "--db", db, "add", "b")
    assert run(capsys, "--db", db, "remove", "2") == (0, "removed #2: b\n", "")
    assert run(capsys, "--db", db, "add", "c")[1] == "added #3: c\n"
    run(capsys, "--db", db, "remove", "1")
    run(capsys, "--db", db, "remove", "3")
    assert run(capsys, "--db", db, "add", "d")[1] == "added #4: d\n"
    assert run(capsys, "--db", db, "list")[1] == "#4 [ ] d\n1 open, 0 done\n"


def test_list_is_ordered_by_id(capsys, db):
    for text in ("zeta", "alpha", "mid"):
        run(capsys, "--db", db, "add", text)
    run(capsys, "--db", db, "done", "1")
    assert run(capsys, "--db", db, "list", "--all")[1] == "#1 [x] zeta\n#2 [ ] alpha\n#3 [ ] mid\n2 open, 1 done\n"


def test_remove_done_item(capsys, db):
    run(capsys, "--db", db, "add", "a")
    run(capsys, "--db", db, "done", "1")
    assert run(capsys, "--db", db, "remove", "1") == (0, "removed #1: a\n", "")
    assert run(capsys, "--db", db, "list", "--all")[1] == "0 open, 0 done\n"


def test_done_unknown_id_exit_1(capsys, db):
    run(capsys, "--db", db, "add", "a")
    code, out, err = run(capsys, "--db", db, "done", "7")
    assert code == 1 and out == "" and err.strip()


def test_done_twice_exit_1_and_unchanged(capsys, db, tmp_path):
    run(capsys, "--db", db, "add", "a")
    run(capsys, "--db", db, "done", "1")
    before = (tmp_path / "todo.json").read_bytes()
    code, out, err = run(capsys, "--db", db, "done", "1")
    assert code == 1 and out == "" and err.strip()
    assert (tmp_path / "todo.json").read_bytes() == before


def test_remove_unknown_id_exit_1(capsys, db, tmp_path):
    run(capsys, "--db", db, "add", "a")
    before = (tmp_path / "todo.json").read_bytes()
    code, out, err = run(capsys, "--db", db, "remove", "5")
    assert code == 1 and out == "" and err.strip()
    assert (tmp_path / "todo.json").read_bytes() == before


def test_done_on_missing_file_exit_1_and_no_file(capsys, db, tmp_path):
    code, out, err = run(capsys, "--db", db, "done", "1")
    assert code == 1 and out == "" and err.strip()
    assert not (tmp_path / "todo.json").exists()


@pytest.mark.parametrize("argv", [
    ["add", "   "],
    ["add", "", " "],
    ["done", "0"],
    ["done", "-2"],
    ["remove", "abc"],
    ["frobnicate"],
    ["add", "x", "--priority", "urgent"],
    ["list", "--verbose"],
    [],
])
def test_usage_errors_exit_2(capsys, db, tmp_path, argv):
    code, out, err = run(capsys, "--db", db, *argv)
    assert code == 2
    assert out == ""
    assert err.strip()
    assert not (tmp_path / "todo.json").exists()


def test_missing_db_option_exit_2(capsys):
    code, out, err = run(capsys, "list")
    assert code == 2 and out == "" and err.strip()


def test_help_exit_0(capsys, db):
    code = main(["--help"])
    assert code == 0
    assert "usage" in capsys.readouterr().out.lower()


def test_corrupt_file_exit_3(capsys, db, tmp_path):
    path = tmp_path / "todo.json"
    path.write_text("{not json", encoding="utf-8")
    for argv in (["list"], ["add", "x"], ["done", "1"]):
        code, out, err = run(capsys, "--db", db, *argv)
        assert code == 3 and out == "" and err.strip()
    assert path.read_text(encoding="utf-8") == "{not json"


def test_add_default_priority_is_normal(capsys, db):
    run(capsys, "--db", db, "add", "plain")
    run(capsys, "--db", db, "add", "explicit", "--priority", "normal")
    assert run(capsys, "--db", db, "list", "--priority", "normal")[1] == (
        "#1 [ ] plain\n#2 [ ] explicit\n2 open, 0 done\n")


def test_list_orders_two_digit_ids_numerically(capsys, db):
    for i in range(1, 12):
        run(capsys, "--db", db, "add", f"task{i}")
    out = run(capsys, "--db", db, "list")[1].splitlines()
    assert out[:-1] == [f"#{i} [ ] task{i}" for i in range(1, 12)]
    assert out[-1] == "11 open, 0 done"
