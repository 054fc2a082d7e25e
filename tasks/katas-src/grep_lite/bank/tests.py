import pytest

from grep_lite import main


@pytest.fixture
def poem(tmp_path):
    p = tmp_path / "poem.txt"
    p.write_text("Roses are red\nviolets are blue\nsugar is sweet\nAnd so are you\n", encoding="utf-8")
    return str(p)


@pytest.fixture
def other(tmp_path):
    p = tmp_path / "other.txt"
    p.write_text("blue sky\n", encoding="utf-8")
    return str(p)


def grep(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_smoke_match_exit_zero(capsys, poem):
    assert grep(capsys, "red", poem)[0] == 0


def test_smoke_no_match_exit_one(capsys, poem):
    assert grep(capsys, "tulip", poem)[0] == 1


def test_smoke_help_works(capsys):
    assert main(["-h"]) == 0


def test_single_file_has_no_prefix(capsys, poem):
    assert grep(capsys, "sweet", poem)[1] == "sugar is sweet\n"


def test_numbers_are_one_based(capsys, poem):
    assert grep(capsys, "-n", "Roses", poem)[1] == "1:Roses are red\n"


def test_case_folding(capsys, poem):
    assert grep(capsys, "-i", "roses", poem)[1] == "Roses are red\n"


def test_error_beats_match(capsys, poem, tmp_path):
    assert grep(capsys, "red", poem, str(tmp_path / "ghost.txt"))[0] == 2


def test_keeps_going_after_missing_file(capsys, poem, tmp_path):
    out = grep(capsys, "sweet", str(tmp_path / "ghost.txt"), poem)[1]
    assert out == f"{poem}:sugar is sweet\n"


def test_match_in_middle_of_line(capsys, poem):
    assert grep(capsys, "blue", poem)[1] == "violets are blue\n"


def test_count_of_are(capsys, poem):
    assert grep(capsys, "-c", "are", poem)[1] == "3\n"


def test_end_anchor(capsys, poem):
    assert grep(capsys, "you$", poem)[1] == "And so are you\n"


def test_bad_regex_exit_two(capsys, poem):
    code, out, _ = grep(capsys, "[abc", poem)
    assert (code, out) == (2, "")


def test_zero_counts_are_listed(capsys, poem, other):
    assert grep(capsys, "-c", "sky", poem, other)[1] == f"{poem}:0\n{other}:1\n"


def test_invert_count(capsys, poem):
    assert grep(capsys, "-vc", "are", poem)[1] == "1\n"


def test_overfit_missing_file_message(capsys, tmp_path):
    _, _, err = grep(capsys, "x", str(tmp_path / "ghost.txt"))
    assert err == f"grep_lite: {tmp_path / 'ghost.txt'}: No such file or directory\n"


def test_overfit_form_feed_stays_inside_line(capsys, tmp_path):
    f = tmp_path / "ff.txt"
    f.write_text("page one\x0cpage two\n", encoding="utf-8")
    assert grep(capsys, "-c", "page", str(f))[1] == "1\n"


def test_broken_expects_prefix_for_single_file(capsys, poem):
    assert grep(capsys, "red", poem)[1] == f"{poem}:Roses are red\n"


def test_broken_expects_case_insensitive_by_default(capsys, poem):
    assert grep(capsys, "roses", poem)[0] == 0
