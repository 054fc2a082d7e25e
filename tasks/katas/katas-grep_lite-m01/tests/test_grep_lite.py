import pytest

from grep_lite import main


@pytest.fixture
def files(tmp_path):
    log = tmp_path / "log.txt"
    log.write_text("start\nERROR disk full\nok\nwarning: error soon\nerror again\n", encoding="utf-8")
    notes = tmp_path / "notes.txt"
    notes.write_text("nothing here\nan Error in notes\nlast line no newline", encoding="utf-8")
    empty = tmp_path / "empty.txt"
    empty.write_text("", encoding="utf-8")
    return {"log": str(log), "notes": str(notes), "empty": str(empty), "missing": str(tmp_path / "nope.txt")}


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_basic_match_single_file(capsys, files):
    assert run(capsys, "error", files["log"]) == (0, "warning: error soon\nerror again\n", "")


def test_search_anywhere_in_line(capsys, files):
    assert run(capsys, "soon", files["log"])[1] == "warning: error soon\n"


def test_regex_features(capsys, files):
    assert run(capsys, r"^e\w+ again$", files["log"])[1] == "error again\n"
    assert run(capsys, "o[kn]$", files["log"])[1] == "ok\nwarning: error soon\n"


def test_ignore_case(capsys, files):
    assert run(capsys, "-i", "error", files["log"])[1] == "ERROR disk full\nwarning: error soon\nerror again\n"


def test_line_numbers(capsys, files):
    assert run(capsys, "-n", "-i", "error", files["log"])[1] == "2:ERROR disk full\n4:warning: error soon\n5:error again\n"


def test_combined_short_options(capsys, files):
    assert run(capsys, "-in", "error", files["log"])[1] == "2:ERROR disk full\n4:warning: error soon\n5:error again\n"


def test_options_after_operands(capsys, files):
    assert run(capsys, "full", files["log"], "-n")[1] == "2:ERROR disk full\n"


def test_invert(capsys, files):
    assert run(capsys, "-v", "-i", "error", files["log"]) == (0, "start\nok\n", "")


def test_invert_with_numbers(capsys, files):
    assert run(capsys, "-vn", "o", files["log"])[1] == "1:start\n2:ERROR disk full\n"


def test_count(capsys, files):
    assert run(capsys, "-c", "-i", "error", files["log"]) == (0, "3\n", "")


def test_count_inverted(capsys, files):
    assert run(capsys, "-c", "-v", "error", files["log"])[1] == "3\n"


def test_count_ignores_line_numbers(capsys, files):
    assert run(capsys, "-c", "-n", "ok", files["log"])[1] == "1\n"


def test_count_zero_is_printed_and_exit_1(capsys, files):
    assert run(capsys, "-c", "zzz", files["log"]) == (1, "0\n", "")


def test_no_match_exit_1(capsys, files):
    assert run(capsys, "zzz", files["log"]) == (1, "", "")


def test_last_line_without_newline(capsys, files):
    assert run(capsys, "-n", "newline", files["notes"])[1] == "3:last line no newline\n"
    assert run(capsys, "-c", "", files["notes"])[1] == "3\n"


def test_no_extra_empty_line_at_end(capsys, files):
    assert run(capsys, "-c", "^$", files["log"]) == (1, "0\n", "")


def test_empty_lines_inside_file(capsys, tmp_path):
    f = tmp_path / "gaps.txt"
    f.write_text("a\n\nb\n", encoding="utf-8")
    assert run(capsys, "-n", "^$", str(f)) == (0, "2:\n", "")


def test_windows_newlines(capsys, tmp_path):
    f = tmp_path / "crlf.txt"
    f.write_bytes(b"one\r\ntwo\r\n")
    assert run(capsys, "o$", str(f))[1] == "two\n"


def test_multiple_files_are_prefixed(capsys, files):
    code, out, _ = run(capsys, "-i", "error", files["log"], files["notes"])
    assert code == 0
    assert out == (f"{files['log']}:ERROR disk full\n{files['log']}:warning: error soon\n"
                   f"{files['log']}:error again\n{files['notes']}:an Error in notes\n")


def test_multiple_files_with_numbers_and_counts(capsys, files):
    out = run(capsys, "-n", "Error", files["notes"], files["log"])[1]
    assert out == f"{files['notes']}:2:an Error in notes\n"
    out = run(capsys, "-c", "Error", files["notes"], files["empty"], files["log"])[1]
    assert out == f"{files['notes']}:1\n{files['empty']}:0\n{files['log']}:0\n"


def test_same_file_twice(capsys, files):
    out = run(capsys, "-c", "ok", files["log"], files["log"])[1]
    assert out == f"{files['log']}:1\n{files['log']}:1\n"


def test_empty_file(capsys, files):
    assert run(capsys, "x", files["empty"]) == (1, "", "")
    assert run(capsys, "-v", "x", files["empty"]) == (1, "", "")


def test_missing_file_is_error_but_others_processed(capsys, files):
    code, out, err = run(capsys, "again", files["missing"], files["log"])
    assert code == 2
    assert out == f"{files['log']}:error again\n"
    assert "nope.txt" in err


def test_missing_file_after_a_match(capsys, files):
    code, out, err = run(capsys, "again", files["log"], files["missing"])
    assert code == 2
    assert out == f"{files['log']}:error again\n"
    assert "nope.txt" in err


def test_surrounding_spaces_are_kept(capsys, tmp_path):
    f = tmp_path / "spaces.txt"
    f.write_text("  indented\ntrailing  \nplain\n", encoding="utf-8")
    assert run(capsys, "^  ", str(f))[1] == "  indented\n"
    assert run(capsys, "  $", str(f))[1] == "trailing  \n"


def test_missing_file_alone(capsys, files):
    code, out, err = run(capsys, "x", files["missing"])
    assert code == 2 and out == "" and "nope.txt" in err


def test_missing_file_without_matches_elsewhere(capsys, files):
    code, out, _ = run(capsys, "zzz", files["log"], files["missing"])
    assert code == 2 and out == ""


def test_invalid_pattern(capsys, files):
    code, out, err = run(capsys, "(unclosed", files["log"])
    assert code == 2 and out == "" and err.strip()


@pytest.mark.parametrize("argv", [[], ["pattern-only"], ["-x", "a", "f"]])
def test_usage_errors(capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and err.strip()


def test_help(capsys):
    assert main(["--help"]) == 0
    assert "usage" in capsys.readouterr().out.lower()
