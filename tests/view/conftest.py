"""Fixtures for the report tests: small run directories written through the real store APIs, a
headless Debian Chromium, and a minimal DOM reader for what Chromium dumps."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from autosaddler.dag import EvolutionDAG, Node
from testhelix.store.runstore import RunStore
from testhelix.strategy.model import initial_strategy

# Untrusted model output that would run if any text reached the page unescaped.
HOSTILE = ("</pre></div><script>document.body.setAttribute('data-pwned','script')</script>"
           "<img src=x onerror=\"document.body.setAttribute('data-pwned','img')\">")

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-extensions", "--hide-scrollbars"]


def chromium_path() -> str | None:
    found = shutil.which("chromium")
    return found or ("/usr/bin/chromium" if Path("/usr/bin/chromium").is_file() else None)


class Browser:
    def __init__(self, exe: str, tmp: Path):
        self.exe, self.tmp, self.runs = exe, tmp, 0

    def _run(self, *args: str) -> subprocess.CompletedProcess:
        self.runs += 1
        profile = self.tmp / f"chromium-profile-{self.runs}"  # a fresh profile per launch
        proc = subprocess.run([self.exe, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return proc

    def dump_dom(self, page: Path, fragment: str = "") -> str:
        return self._run("--dump-dom", page.resolve().as_uri() + fragment).stdout

    def screenshot(self, page: Path, out: Path, size: str = "1300,1400", fragment: str = "") -> Path:
        self._run(f"--screenshot={out}", f"--window-size={size}", page.resolve().as_uri() + fragment)
        return out


@pytest.fixture
def browser(tmp_path) -> Browser:
    exe = chromium_path()
    if exe is None:
        if os.environ.get("CI") == "true":  # .ci/run installs it: a skip there would hide a broken install
            pytest.fail("chromium is missing in CI (.ci/run installs Debian's package)")
        pytest.skip("chromium is not installed (CI installs Debian's package from .ci/run)")
    return Browser(exe, tmp_path)


# --- a DOM reader --------------------------------------------------------------------------------
class Element:
    def __init__(self, tag: str, attrs: dict[str, str], parent: Element | None):
        self.tag, self.attrs, self.parent = tag, attrs, parent
        self.children: list[Element | str] = []

    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def iter(self):
        for c in self.children:
            if isinstance(c, Element):
                yield c
                yield from c.iter()

    def find_all(self, tag: str | None = None, cls: str | None = None, **attrs: str) -> list[Element]:
        out = []
        for el in self.iter():
            if tag and el.tag != tag:
                continue
            if cls and cls not in (el.attrs.get("class") or "").split():
                continue
            if all(el.attrs.get(k.replace("_", "-")) == v for k, v in attrs.items()):
                out.append(el)
        return out

    def by_id(self, ident: str) -> Element:
        found = [el for el in self.iter() if el.attrs.get("id") == ident]
        assert found, f"no element with id {ident!r}"
        return found[0]


VOID = {"meta", "link", "br", "img", "input", "hr", "source", "wbr", "area", "base", "col", "embed", "param",
        "track"}


class _Builder(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Element("#document", {}, None)
        self.cur = self.root

    def handle_starttag(self, tag, attrs):
        el = Element(tag, {k: ("" if v is None else v) for k, v in attrs}, self.cur)
        self.cur.children.append(el)
        if tag not in VOID:
            self.cur = el

    def handle_startendtag(self, tag, attrs):
        self.cur.children.append(Element(tag, {k: ("" if v is None else v) for k, v in attrs}, self.cur))

    def handle_endtag(self, tag):
        node: Element | None = self.cur
        while node is not None and node.tag != tag:
            node = node.parent
        if node is not None and node.parent is not None:
            self.cur = node.parent

    def handle_data(self, data):
        self.cur.children.append(data)


def parse(html: str) -> Element:
    b = _Builder()
    b.feed(html)
    return b.root


# --- run directories -----------------------------------------------------------------------------
def _node(node_id, iteration, strategy, edit, status, reason="", parent=None, child=None, dev=None, usage=None):
    # the real content hash: a store whose strategies do not re-hash to it is refused on load
    from testhelix.strategy.model import Strategy

    digest = (strategy if isinstance(strategy, Strategy) else Strategy.model_validate(strategy)).content_hash()
    return Node(node_id=node_id, iteration=iteration, strategy_hash=digest, strategy=strategy, edit=edit,
                status=status, reason=reason, parent_outcomes=parent or {}, child_outcomes=child or {},
                dev_score=dev, optimizer_usage=usage or {}, generator_usage={"tokens": 1000, "calls": 10},
                elapsed_s=1.5)


def usage(diag_calls, diag_tokens, refl_calls=0, refl_tokens=0):
    return {"selection": {"calls": 0, "tokens": 0, "failures": 0},
            "diagnosis": {"calls": diag_calls, "tokens": diag_tokens, "failures": 0},
            "reflection": {"calls": refl_calls, "tokens": refl_tokens, "failures": 0}}


@pytest.fixture
def search_run(tmp_path) -> Path:
    """Five nodes: root (dev 0.40), a rejected proposal, a screened-out child with one regression
    (whose rationale is hostile text), a developed child (0.55) and its developed child (0.60);
    plus one gate decision with 5 both / 7 challenger-only / 1 baseline-only / 2 neither."""
    run = tmp_path / "search"
    s0 = initial_strategy().model_dump(mode="json")
    s3 = {**s0, "agentSteps": 16}
    s4 = {**s3, "guidance": "Assert only what the specification fixes."}
    store = RunStore(run)
    store.put_state("meta", {"pack": "tasks/katas", "model": "sim:weak", "optimizer_model": "sim:strong",
                             "preset": "demo", "config": {"train_minibatch_size": 3, "seed": 42}})
    dag = EvolutionDAG()
    dag.record(store, _node("n000", 0, s0, None, "root", dev=0.40), None)
    dag.record(store, _node("n001", 1, s0, {"kind": "field", "field": "evaluator", "value": "x",
                                            "rationale": "change the judge"}, "rejected",
                            "'evaluator' is not a strategy field", usage=usage(1, 1500)), "n000")
    dag.record(store, _node("n002", 2, {**s0, "rounds": 3}, {"kind": "field", "field": "rounds", "value": 3,
                                                             "rationale": HOSTILE}, "screened_out", "1 regression(s)",
                            parent={"t1": 1, "t2": 0, "t3": 0}, child={"t1": 0, "t2": 1, "t3": 0},
                            usage=usage(2, 3100)), "n000")
    dag.record(store, _node("n003", 3, s3, {"kind": "field", "field": "agentSteps", "value": 16,
                                            "rationale": "sessions ran out of steps"}, "developed",
                            "+1 successes, no regressions", parent={"t4": 0, "t5": 1, "t6": 0},
                            child={"t4": 1, "t5": 1, "t6": 0}, dev=0.55, usage=usage(3, 4600)), "n000")
    dag.record(store, _node("n004", 4, s4, {"kind": "field", "field": "guidance", "value": s4["guidance"],
                                            "rationale": "reviews flagged incidental checks"}, "developed",
                            "+1 successes, no regressions", parent={"t7": 0, "t8": 1, "t9": 1},
                            child={"t7": 1, "t8": 1, "t9": 1}, dev=0.60, usage=usage(4, 6100, 1, 600)), "n003")
    for role, tokens in (("optimizer", 5000), ("reflection", 600)):
        store.record_model_call({"run_label": "optimizer", "role": role, "model": "sim:strong",
                                 "input_tokens": tokens, "output_tokens": 100, "cost_usd": None, "status": "ok",
                                 "simulated": True})
    store.upsert("gate_results", {"gate_id": "gate-test0001", "challenger_hash": "hash-n004", "baseline_hash": "hash-n000",
                                  "split": "release", "model": "sim:weak", "n": 15, "wins": 7, "losses": 1,
                                  "challenger_successes": 12, "baseline_successes": 6, "p_value": 0.03515625,
                                  "ci95": [0.2, 0.6], "ci99": [0.1, 0.7], "promoted": True})
    store.close()
    return run


@pytest.fixture
def helix_run(tmp_path) -> Path:
    """Two tasks × configurations A and C of sim:strong, one trajectory per cell (one with hostile output)."""
    run = tmp_path / "helix"
    store = RunStore(run)
    cells = {("sim:strong/A", "task-a"): (1, 1, "only-qualified"), ("sim:strong/A", "task-b"): (1, 0, "only-qualified"),
             ("sim:strong/C", "task-a"): (1, 1, "witness-support"), ("sim:strong/C", "task-b"): (0, 0, None)}
    for (label, task), (f, s, rule) in cells.items():
        config = label.split("/")[1]
        store.record_run(label, "helix", {"model": "sim:strong", "config": config, "pairs": 1 if config == "A" else 3})
        submitted = rule is not None
        store.record_task_result({"run_label": label, "task_id": task, "submitted": submitted, "F": f, "S": s,
                                  "tokens": 1200, "calls": 3, "detail": {"submission": rule or "none"}})
        outcomes = [{"program_id": "reference", "role": "reference", "label": "valid",
                     "status": ("pass" if f else "fail") if submitted else "error"},
                    {"program_id": "initial", "role": "initial", "label": "invalid",
                     "status": ("fail" if f else "pass") if submitted else "error"},
                    {"program_id": "alt1", "role": "alternative", "label": "valid",
                     "status": "pass" if s else "fail"},
                    {"program_id": "bad1", "role": "invalid", "label": "invalid", "status": "fail"}]
        store.record_task_outcomes(label, task, outcomes)
        store.record_model_call({"run_label": label, "task_id": task, "role": "generation", "model": "sim:strong",
                                 "input_tokens": 1000, "output_tokens": 200, "cost_usd": None, "simulated": True})
        content = HOSTILE if (label, task) == ("sim:strong/C", "task-b") else "Writing the suite."
        traj = {"format": 1, "meta": {"model": "sim:strong", "simulated": True, "task_id": task, "phase": "generation",
                                      "pair": 0, "round": 0},
                "messages": [{"role": "system", "content": "You write tests."},
                             {"role": "assistant", "content": content,
                              "tool_calls": [{"id": "c1", "name": "write_file",
                                              "arguments": {"path": "suite/test_x.py",
                                                            "content": "def test_x():\n    assert 1\n"}}]},
                             {"role": "tool", "content": f"wrote suite/test_x.py {HOSTILE}", "tool_call_id": "c1"}],
                "steps": [{"step": 1, "usage": {"input_tokens": 1000, "output_tokens": 200}}], "exit": "submitted"}
        folder = run / "work" / label.replace(":", "_").replace("/", "_") / task / "pair0"
        folder.mkdir(parents=True)
        (folder / "trajectory-generation-r0.json").write_text(json.dumps(traj))
    store.close()
    return run


@pytest.fixture
def parse_dom():
    return parse
