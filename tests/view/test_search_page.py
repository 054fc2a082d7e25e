"""The search page's numbers and evidence: per-node usage equals the store's, the optimizer's prompts
and replies per node, links to the trajectories behind minibatch and development scores, a learning
curve with every node, and a search box."""

from __future__ import annotations

import json

from autosaddler.search import exchanges_key
from autosaddler.store import put_search_eval
from autosaddler.view import render_search_report
from autosaddler.view_node import search_label
from testhelix.store.runstore import RunStore
from testhelix.view.trajectories import safe_name


def _add_evidence(run):
    """n003's step transcript, and its development evaluations with one trajectory on disk."""
    store = RunStore(run)
    _, rows = store.query("SELECT strategy_hash FROM dag_nodes WHERE node_id = 'n003'")
    digest = rows[0][0]
    store.put_state(exchanges_key("n003"), [
        {"session": "diagnosis", "prompt": [{"role": "system", "content": "You improve strategies."},
                                            {"role": "user", "content": "## Traces\n<b>t4 failed</b>"}],
         "reply": '{"kind": "field", "field": "agentSteps", "value": 16}', "failure": None},
        {"session": "reflection", "prompt": [{"role": "user", "content": "draft"}], "reply": None,
         "failure": "no answer within 300 s"}])
    for task, ok in (("d1", 1), ("d2", 0)):
        put_search_eval(store, digest, task, "development", ok, {})
    store.close()
    folder = run / "work" / safe_name(search_label(digest)) / "d1" / "pair0"
    folder.mkdir(parents=True)
    (folder / "trajectory-generation.json").write_text(json.dumps(
        {"meta": {"model": "sim:weak"}, "messages": [], "steps": [], "exit": "submitted"}))
    parent_dir = run / "work" / safe_name(search_label(digest)) / "t4" / "pair0"
    parent_dir.mkdir(parents=True)
    (parent_dir / "trajectory-generation.json").write_text(json.dumps({"meta": {"model": "sim:weak"}, "steps": []}))
    return digest


def test_per_node_usage_equals_the_store(search_run, tmp_path, parse_dom):
    parse = parse_dom
    out = tmp_path / "page.html"
    render_search_report(search_run, out)
    doc = parse(out.read_text(encoding="utf-8"))
    store = RunStore(search_run, read_only=True)
    _, stored = store.query("SELECT node_id, session, calls, tokens FROM optimizer_sessions ORDER BY 1, 2")
    store.close()
    assert stored
    shown = {}
    for table in doc.find_all("table", cls="node-usage"):
        for row in table.find_all("tr")[1:]:
            cells = [c.text() for c in row.find_all("td")]
            shown[(table.attrs["data-node"], cells[0])] = (int(cells[1]), int(cells[2].replace(",", "")))
    assert shown == {(node, session): (calls, tokens) for node, session, calls, tokens in stored}
    # n004's diagnosis used 4 calls and 6,100 tokens in its own step (not 4 - 3 and 6,100 - 4,600)
    assert shown[("n004", "diagnosis")] == (4, 6100)


def test_prompts_replies_and_trajectory_links_per_node(search_run, tmp_path, parse_dom):
    parse = parse_dom
    _add_evidence(search_run)
    out = tmp_path / "page.html"
    info = render_search_report(search_run, out)
    text = out.read_text(encoding="utf-8")
    doc = parse(text)
    panel = doc.by_id("detail-n003")
    exchanges = panel.find_all("details", cls="exchange")
    assert len(exchanges) == 2 and "diagnosis session" in exchanges[0].text()
    assert "&lt;b&gt;t4 failed&lt;/b&gt;" in text and "<b>t4 failed</b>" not in text     # escaped
    assert "no answer within 300 s" in exchanges[1].text()
    assert "No optimizer prompt recorded" in doc.by_id("detail-n004").text()
    dev_rows = panel.find_all("table", cls="dev-evidence")[0].find_all("tr")[1:]
    assert [r.find_all("td")[0].text() for r in dev_rows] == ["d1", "d2"]
    link = dev_rows[0].find_all("a")[0].attrs["href"]
    assert (out.parent / link).is_file() and dev_rows[1].find_all("a") == []
    # the minibatch row of t4 links the child's (n003) runs; the parent n000 has none on disk
    t4 = [r for r in panel.find_all("tr") if r.find_all("td") and r.find_all("td")[0].text() == "t4"][0]
    assert [c.text() for c in t4.find_all("td")][-2:] == ["—", "trajectories"]
    assert info["trajectory_pages"] == 2


def test_learning_curve_has_every_node_and_the_page_a_search_box(search_run, tmp_path, parse_dom):
    parse = parse_dom
    out = tmp_path / "page.html"
    render_search_report(search_run, out)
    doc = parse(out.read_text(encoding="utf-8"))
    rows = doc.by_id("dev-table").find_all("tr")[1:]
    assert [r.find_all("td")[2].text() for r in rows] == ["root", "rejected", "screened_out", "developed", "developed"]
    points = doc.by_id("dev-chart").find_all("circle", cls="point")
    series = {(p.attrs["data-series"], p.attrs["data-x"]) for p in points}
    assert ("minibatch success (every evaluated child)", "2") in series        # n002, screened out
    assert ("rejected (not evaluated; drawn at 0)", "1") in series            # n001
    assert doc.by_id("node-search").attrs["type"] == "search"
    texts = {g.attrs["data-node"]: g.attrs["data-text"] for g in doc.find_all("g", cls="node")}
    assert "agentsteps" in texts["n003"] and "rejected" in texts["n001"]


def test_a_search_through_a_served_simulated_model_says_so(search_run, tmp_path, parse_dom):
    store = RunStore(search_run)
    store.record_model_call({"run_label": "search/0123456789ab", "role": "generation", "model": "anthropic:claude-x",
                             "input_tokens": 10, "output_tokens": 5, "cost_usd": None, "status": "ok",
                             "simulated": True})
    store.close()
    out = tmp_path / "page.html"
    assert render_search_report(search_run, out)["simulated"] is True
    banner = parse_dom(out.read_text(encoding="utf-8")).by_id("simulated").text()
    assert "anthropic:claude-x was answered by a simulated model" in banner
