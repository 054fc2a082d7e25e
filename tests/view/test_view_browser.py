"""The HTML reports in a real browser (headless Debian Chromium, no network): the DOM after the
page's script ran holds the expected nodes, edges and numbers, a click selects a node, untrusted
text stays inert, and a screenshot is taken."""

from __future__ import annotations

import re

import pytest
from scipy.stats import binom

from autosaddler.view import render_search_report
from testhelix.view import render_run_report

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _no_network_references(html: str) -> None:
    assert not re.search(r"""\b(src|href)\s*=\s*["']?(https?:|//)""", html, re.I), "the page references the network"
    import html as html_lib

    assert "default-src 'none'" in html_lib.unescape(html)


@pytest.mark.slow
def test_search_report_in_chromium(search_run, tmp_path, browser, parse_dom):
    parse = parse_dom
    out = tmp_path / "out" / "search.html"
    info = render_search_report(search_run, out)
    html = out.read_text()
    _no_network_references(html)
    assert info["nodes"] == 5 and info["edges"] == 4

    dom = parse(browser.dump_dom(out))
    nodes = {g.attrs["data-node"]: g for g in dom.find_all("g", cls="node")}
    assert sorted(nodes) == ["n000", "n001", "n002", "n003", "n004"]
    assert {n: g.attrs["data-status"] for n, g in nodes.items()} == {
        "n000": "root", "n001": "rejected", "n002": "screened_out", "n003": "developed", "n004": "developed"}
    assert nodes["n004"].attrs["data-dev"] == "0.6" and nodes["n001"].attrs["data-dev"] == ""
    assert "60.0%" in nodes["n004"].text() and "★" in nodes["n004"].text()
    edges = {(e.attrs["data-parent"], e.attrs["data-child"]) for e in dom.find_all("line", cls="edge")}
    assert edges == {("n000", "n001"), ("n000", "n002"), ("n000", "n003"), ("n003", "n004")}
    # the best node's panel is open at first, the others hidden
    visible = [d.attrs["data-node"] for d in dom.find_all("div", cls="detail") if "hidden" not in d.attrs]
    assert visible == ["n004"]
    # the learning curve: every evaluated child's minibatch success, development scores and the running best
    points = [(p.attrs["data-series"], p.attrs["data-x"], p.attrs["data-y"]) for p in dom.find_all("circle", cls="point")]
    assert ("development score", "0", "0.4") in points and ("development score", "4", "0.6") in points
    assert any(series.startswith("minibatch success") for series, _, _ in points)
    assert ("best development so far", "3", "0.55") in points
    # proposals by field and their fate
    proposals = {r.find_all("td")[0].text(): [c.text() for c in r.find_all("td")[1:]]
                 for r in dom.by_id("proposals-table").find_all("tr")[1:]}
    assert proposals["field rounds"][:4] == ["0", "1", "0", "1"]
    assert proposals["field agentSteps"][:4] == ["0", "0", "1", "1"]
    # the gate: 2x2 table, exact p (computed here independently), decision and what it means
    assert dom.by_id("gate-test0001-both").text() == "5" and dom.by_id("gate-test0001-neither").text() == "2"
    assert dom.by_id("gate-test0001-wins").text() == "7" and dom.by_id("gate-test0001-losses").text() == "1"
    assert dom.by_id("gate-test0001-p").text() == f"{binom.sf(6, 8, 0.5):.6f}" == "0.035156"
    assert "PROMOTED" in dom.by_id("gate-test0001-decision").text()
    assert "What a promotion means" in dom.by_id("gate-meaning").text()
    assert "sim:strong, sim:weak are simulated models" in dom.by_id("simulated").text()

    # clicking a node (the address fragment dispatches a real click event) opens its panel
    dom = parse(browser.dump_dom(out, "#node=n002"))
    assert dom.find_all("body")[0].attrs.get("data-selected") == "n002"
    visible = [d for d in dom.find_all("div", cls="detail") if "hidden" not in d.attrs]
    assert [d.attrs["data-node"] for d in visible] == ["n002"]
    selected = [g.attrs["data-node"] for g in dom.find_all("g", cls="selected")]
    assert selected == ["n002"]
    panel = visible[0]
    regressions = [r for r in panel.find_all("td", cls="regression")]
    assert [r.parent.find_all("td")[0].text() for r in regressions] == ["t1"]
    assert [g.parent.find_all("td")[0].text() for g in panel.find_all("td", cls="gain")] == ["t2"]
    diff_added = [s.text() for s in panel.find_all("span", cls="add")]
    assert any('"rounds": 3' in line for line in diff_added)
    # the hostile rationale is shown as text and did not run
    assert "data-pwned" not in dom.find_all("body")[0].attrs
    assert "<script>document.body" in panel.find_all("pre", cls="rationale")[0].text()
    assert len(dom.find_all("script")) == 1 and not dom.find_all("img")

    shot = browser.screenshot(out, tmp_path / "dag.png", fragment="#node=n004")
    data = shot.read_bytes()
    assert data.startswith(PNG_MAGIC) and len(data) > 10_000


@pytest.mark.slow
def test_helix_report_in_chromium(helix_run, tmp_path, browser, parse_dom):
    parse = parse_dom
    out = tmp_path / "out" / "run.html"
    info = render_run_report(helix_run, out)
    assert info["trajectory_pages"] == 4 and info["simulated"]
    _no_network_references(out.read_text())

    dom = parse(browser.dump_dom(out))
    metrics = {r.find_all("td")[0].text(): [c.text() for c in r.find_all("td")] for r in
               dom.by_id("metrics").find_all("tr")[1:]}
    assert metrics["sim:strong/A"][3] == "2"                      # N: two tasks
    assert metrics["sim:strong/A"][4] == "100.0%"                 # F on both tasks
    assert metrics["sim:strong/C"][4] == "50.0%"                  # task-b: no suite counts as a failure
    assert metrics["sim:strong/C"][8] == "50.0%"                  # S
    cells = {(c.attrs["data-task"], c.attrs["data-label"]): (c.attrs["data-f"], c.attrs["data-s"])
             for c in dom.by_id("matrix").find_all("span")}
    assert cells == {("task-a", "sim:strong/A"): ("1", "1"), ("task-b", "sim:strong/A"): ("1", "0"),
                     ("task-a", "sim:strong/C"): ("1", "1"), ("task-b", "sim:strong/C"): ("0", "0")}
    rules = {r.find_all("td")[0].text(): [c.text() for c in r.find_all("td")[1:]]
             for r in dom.by_id("rules").find_all("tr")[1:]}
    headers = [h.text() for h in dom.by_id("rules").find_all("th")[1:]]
    assert dict(zip(headers, rules["sim:strong/C"])) == {"not submitted": "1", "only-qualified": "0",
                                                        "witness-support": "1"}
    usage_rows = [[c.text() for c in r.find_all("td")] for r in dom.by_id("usage").find_all("tr")[1:]]
    assert usage_rows[-1][:5] == ["total", "", "4,000", "800", "4"]
    assert all(row[5] == "unknown (no price)" for row in usage_rows)
    assert "sim:strong is a simulated model" in dom.by_id("simulated").text()
    links = [a.attrs["href"] for a in dom.by_id("matrix").find_all("a", cls="traj")]
    assert len(links) == 4

    # the trajectory page with hostile model and tool output: rendered as text, inert
    hostile_page = out.parent / "run_trajectories" / "sim_strong_C" / "task-b.html"
    assert "run_trajectories/sim_strong_C/task-b.html" in links
    tdom = parse(browser.dump_dom(hostile_page))
    body = tdom.find_all("body")[0]
    assert "data-pwned" not in body.attrs
    assert not tdom.find_all("script") and not tdom.find_all("img")
    text = body.text()
    assert "<script>document.body.setAttribute('data-pwned','script')</script>" in text
    assert "tool call: write_file" in text and "observation" in text and "wrote suite/test_x.py" in text
    assert "def test_x():" in text
    assert "sim:strong is a simulated model" in text

    shot = browser.screenshot(out, tmp_path / "matrix.png", size="1200,900")
    assert shot.read_bytes().startswith(PNG_MAGIC)
