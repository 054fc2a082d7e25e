"""A real (small) helix run with a simulated model, rendered and read back in Chromium: the numbers
on the page are the stored ones, and the trajectory page shows the recorded tool calls."""

from __future__ import annotations

from pathlib import Path

import pytest

from testhelix.commands.cli import main as helix_cli
from testhelix.core.bundled_data import bundled_pack
from testhelix.store.runstore import RunStore
from testhelix.view import render_run_report


@pytest.mark.slow
def test_real_helix_run_report(tmp_path, browser, parse_dom):
    pack = bundled_pack("katas")
    run = tmp_path / "run"
    with pytest.raises(SystemExit) as info:
        helix_cli(["run", "--pack", str(pack), "--split", "test", "--config", "A", "--model", "sim:strong",
                   "--run", str(run), "--limit", "1", "--workers", "1", "--no-coverage", "--json"])
    assert info.value.code == 0
    store = RunStore(run, read_only=True)
    (row,) = store.task_results()
    store.close()

    out = render_run_report(run, tmp_path / "report.html")
    dom = parse_dom(browser.dump_dom(Path(out["out"])))
    (cell,) = dom.by_id("matrix").find_all("span")
    assert (cell.attrs["data-task"], cell.attrs["data-label"]) == (row["task_id"], "sim:strong/A")
    assert (cell.attrs["data-f"], cell.attrs["data-s"]) == (str(row["F"]), str(row["S"]))
    metrics = [c.text() for c in dom.by_id("metrics").find_all("tr")[1].find_all("td")]
    assert metrics[3] == "1" and metrics[4] == f"{100.0 * row['F']:.1f}%"
    (link,) = [a.attrs["href"] for a in dom.find_all("a", cls="traj")]
    traj = parse_dom(browser.dump_dom(tmp_path / link))
    text = traj.find_all("body")[0].text()
    assert "tool call: write_file" in text and "observation" in text and "simulated model" in text
