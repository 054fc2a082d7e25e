import json

import pytest

from todo_cli import main


@pytest.fixture
def db(tmp_path):
    return str(tmp_path / "tasks.json")


def cli(capsys, db, *args):
    code = main(["--db", db, *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_smoke_add_returns_zero(capsys, db):
    assert cli(capsys, db, "add", "hello")[0] == 0


def test_smoke_list_returns_zero(capsys, db):
    assert cli(capsys, db, "list")[0] == 0


def test_smoke_help(capsys):
    assert main(["--help"]) == 0


def test_next_id_after_removing_first(capsys, db):
    cli(capsys, db, "add", "one")
    cli(capsys, db, "add", "two")
    cli(capsys, db, "remove", "1")
    assert cli(capsys, db, "add", "three")[1] == "added #3: three\n"


def test_ordering_by_id_not_text(capsys, db):
    cli(capsys, db, "add", "banana")
    cli(capsys, db, "add", "apple")
    lines = cli(capsys, db, "list")[1].splitlines()
    assert lines[0] == "#1 [ ] banana"


def test_done_items_hidden_by_default(capsys, db):
    cli(capsys, db, "add", "first")
    cli(capsys, db, "add", "second")
    cli(capsys, db, "done", "2")
    assert cli(capsys, db, "list")[1] == "#1 [ ] first\n1 open, 1 done\n"


def test_summary_ignores_filter(capsys, db):
    cli(capsys, db, "add", "low one", "--priority", "low")
    cli(capsys, db, "add", "normal one")
    assert cli(capsys, db, "list", "--priority", "low")[1].splitlines()[-1] == "2 open, 0 done"


def test_double_done_is_exit_1(capsys, db):
    cli(capsys, db, "add", "t")
    cli(capsys, db, "done", "1")
    assert cli(capsys, db, "done", "1")[0] == 1


def test_remove_missing_is_exit_1(capsys, db):
    assert cli(capsys, db, "remove", "3")[0] == 1


def test_normal_priority_has_no_suffix(capsys, db):
    cli(capsys, db, "add", "boring")
    assert cli(capsys, db, "list")[1].splitlines()[0] == "#1 [ ] boring"


def test_whitespace_text_rejected(capsys, db):
    assert cli(capsys, db, "add", " ", "  ")[0] == 2


def test_broken_json_exit_3(capsys, db):
    with open(db, "w") as fh:
        fh.write("[[[")
    assert cli(capsys, db, "list")[0] == 3


def test_list_leaves_no_file_behind(capsys, db, tmp_path):
    cli(capsys, db, "list", "--all")
    assert list(tmp_path.iterdir()) == []


def test_overfit_file_layout(capsys, db):
    cli(capsys, db, "add", "peek")
    with open(db) as fh:
        data = json.load(fh)
    assert data["items"][0]["text"] == "peek"
    assert data["next_id"] == 2


def test_overfit_error_wording(capsys, db):
    _, _, err = cli(capsys, db, "done", "9")
    assert err == "todo_cli: error: no item #9\n"


def test_broken_expects_ids_from_zero(capsys, db):
    assert cli(capsys, db, "add", "x")[1] == "added #0: x\n"


def test_broken_expects_unknown_done_exit_2(capsys, db):
    assert cli(capsys, db, "done", "4")[0] == 2
