"""`testhelix view` / `autosaddler view` on the command line: reports, clear errors (exit 2),
and a run in progress (another process holds the store's write lock)."""

from __future__ import annotations

import html
import subprocess
import sys
import time

import pytest

from autosaddler.cli import main as saddler_cli
from testhelix.commands.cli import main as helix_cli
from testhelix.store.runstore import RunStore
from testhelix.view.html import SCRIPT, _script_hash, diff, esc, page, tag


def _exit(main, argv, capsys):
    with pytest.raises(SystemExit) as info:
        main(argv)
    out = capsys.readouterr()
    return info.value.code, out.out, out.err


def test_commands_write_reports(search_run, helix_run, tmp_path, capsys):
    code, out, _ = _exit(saddler_cli, ["view", str(search_run), "--out", str(tmp_path / "s.html")], capsys)
    assert code == 0 and "5 nodes, 4 edges" in out and "simulated" in out
    code, out, _ = _exit(helix_cli, ["view", str(helix_run), "--out", str(tmp_path / "r.html")], capsys)
    assert code == 0 and "4 trajectory page(s)" in out
    assert (tmp_path / "r_trajectories" / "sim_strong_A" / "task-a.html").is_file()
    # the default outputs differ per command (RUN_DIR/search-report.html, RUN_DIR/run-report.html), so
    # neither overwrites the other; a gate stored in a search run also renders under testhelix
    code, _, _ = _exit(helix_cli, ["view", str(search_run)], capsys)
    assert code == 0 and "Release gate" in (search_run / "run-report.html").read_text()
    code, _, _ = _exit(saddler_cli, ["view", str(search_run)], capsys)
    assert code == 0 and "Evolution DAG" in (search_run / "search-report.html").read_text()
    assert "Evolution DAG" not in (search_run / "run-report.html").read_text()


def test_bad_input_is_a_clear_error(search_run, helix_run, tmp_path, capsys):
    code, _, err = _exit(helix_cli, ["view", str(tmp_path / "nowhere"), "--out", str(tmp_path / "x.html")], capsys)
    assert code == 2 and "no run store here" in err and "Traceback" not in err
    code, _, err = _exit(saddler_cli, ["view", str(helix_run), "--out", str(tmp_path / "x.html")], capsys)
    assert code == 2 and "no search node recorded yet" in err
    empty = tmp_path / "empty"
    RunStore(empty).close()
    code, _, err = _exit(helix_cli, ["view", str(empty)], capsys)
    assert code == 2 and "no evaluated task and no gate decision" in err
    code, _, err = _exit(saddler_cli, ["view", str(search_run), "--out", str(tmp_path)], capsys)
    assert code == 2 and "is a folder" in err


def test_a_run_in_progress_renders_what_it_committed(search_run, tmp_path):
    """A second process keeps the store open for writing (as a running search does)."""
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time\nfrom testhelix.store.runstore import RunStore\n"
        f"s = RunStore({str(search_run)!r})\nprint('open', flush=True)\ntime.sleep(60)\n")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
        from autosaddler.view import render_search_report

        info = render_search_report(search_run, tmp_path / "live.html")
        text = html.unescape((tmp_path / "live.html").read_text())
        assert info["in_progress"] and info["nodes"] == 5
        assert "Run in progress." in text and "what it had committed at" in text
    finally:
        holder.kill()
        holder.wait()
    started = time.monotonic()
    from autosaddler.view import render_search_report

    assert not render_search_report(search_run, tmp_path / "done.html")["in_progress"]
    assert time.monotonic() - started < 60


def test_escaping_and_page_security():
    assert esc('<script>"x"&\'') == "&lt;script&gt;&quot;x&quot;&amp;&#x27;"
    assert tag("td", "<b>", class_='a"b') == '<td class="a&quot;b">&lt;b&gt;</td>'
    doc = page("t <i>", [tag("p", "<img src=x>")], simulated="sim:weak is simulated")
    assert "<img" not in doc and "&lt;img src=x&gt;" in doc and "<title>t &lt;i&gt;</title>" in doc
    # the CSP admits exactly the page's own script and nothing from the network
    csp = html.unescape(doc.split('http-equiv="Content-Security-Policy" content="')[1].split('"')[0])
    assert f"script-src '{_script_hash(SCRIPT)}'" in csp and "default-src 'none'" in csp
    d = diff('{\n "a": 1\n}', '{\n "a": 2\n}', "n000", "n001")
    assert '<span class="del">- &quot;a&quot;: 1' in d and '<span class="add">+ &quot;a&quot;: 2' in d
