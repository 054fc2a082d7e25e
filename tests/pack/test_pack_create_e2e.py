"""`pack create` end to end on a small fixture program (tests/fixtures/create/wordstat), with the
real sandboxed verifier, both generators, and `pack verify` on the result."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from testhelix.commands.cli import cli as main
from testhelix.execution.seam import create_executor
from testhelix.llm.testing import ScriptedModel
from testhelix.pack.createpack import create_pack, executor_verifier, find_sources
from testhelix.pack.generators import ModelGenerator
from testhelix.pack.panelgate import Diversity
from testhelix.pack.verify import verify_pack
from testhelix.tasks.model import read_manifest, read_task_toml

FIXTURE = Path(__file__).parents[1] / "fixtures" / "create" / "wordstat"

pytestmark = pytest.mark.slow


def _fence(code: str) -> str:
    return f"Here it is.\n\n```python\n{code.strip()}\n```\n"


TOP = '''

def top_words(text, n):
    counts = count_words(text)
    return sorted(counts, key=lambda w: (-counts[w], w))[:max(n, 0)]
'''
ALT_REGEX = '''import re
from collections import Counter


def count_words(text):
    return dict(Counter(re.findall(r"[a-z']+", text.lower())))
''' + TOP
ALT_SPLIT = '''def count_words(text):
    cleaned = "".join(c if c.isalpha() or c == "'" else " " for c in text.lower())
    out = {}
    for w in cleaned.split():
        out[w] = out.get(w, 0) + 1
    return out


def top_words(text, n):
    if n < 1:
        return []
    pairs = [(-c, w) for w, c in count_words(text).items()]
    pairs.sort()
    return [w for _, w in pairs][:n]
'''
ALT_GROUPBY = '''from itertools import groupby


def count_words(text):
    counts = {}
    for is_word, chars in groupby(text.lower(), key=lambda c: c.isalpha() or c == "'"):
        if is_word:
            w = "".join(chars)
            counts[w] = counts.get(w, 0) + 1
    return counts


def top_words(text, n):
    import heapq
    counts = count_words(text)
    return heapq.nsmallest(max(n, 0), counts, key=lambda w: (-counts[w], w))
'''
ALT_WHILE = '''def count_words(text):
    text = text.lower()
    counts = {}
    i = 0
    while i < len(text):
        j = i
        while j < len(text) and (text[j].isalpha() or text[j] == "'"):
            j += 1
        if j > i:
            counts[text[i:j]] = counts.get(text[i:j], 0) + 1
            i = j
        else:
            i += 1
    return counts
''' + TOP
MEANT_CORRECT_BUT_WRONG = '''def count_words(text):
    out = {}
    for w in text.lower().split():
        out[w] = out.get(w, 0) + 1
    return out
''' + TOP
FAULTY = [
    ALT_REGEX.replace("text.lower()", "text"),                        # case-sensitive
    ALT_SPLIT.replace("pairs.sort()", "pairs.sort(reverse=True)"),     # least frequent first
    ALT_GROUPBY.replace("max(n, 0)", "abs(n)"),                       # negative n returns words
    ALT_WHILE.replace(' or text[j] == "\'"', ""),                     # apostrophes split words
    ALT_REGEX.replace("[:max(n, 0)]", "[:max(n - 1, 0)]"),            # one word short
    ALT_SPLIT.replace("[:n]", "[:n + 1]"),                            # one word too many
]


def _replies() -> list[str]:
    """In the order create.py asks: 4 alternatives then 6 faulty programs (5 + the initial one), then
    the 3 alternatives still missing, then 1."""
    return [_fence(ALT_REGEX), "Sorry, I cannot help with that.", _fence(ALT_REGEX), _fence(MEANT_CORRECT_BUT_WRONG),
            *(_fence(code) for code in FAULTY),
            _fence("def count_words(text:\n    pass\n"), _fence(ALT_SPLIT), _fence(ALT_GROUPBY),
            _fence(ALT_WHILE)]


def _sources(tmp_path: Path):
    shutil.copytree(FIXTURE, tmp_path / "src" / "wordstat")
    return tmp_path / "src"


def test_pack_create_with_the_offline_generator_writes_a_pack_that_verifies(tmp_path, monkeypatch):
    monkeypatch.setenv("TESTHELIX_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "pack"
    result = CliRunner().invoke(main, ["pack", "create", str(_sources(tmp_path)), "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    index = json.loads(result.stdout)
    assert index["tasks"] == ["wordstat-top"] and index["generator"] == "offline" and index["budget"] == 30
    assert [r["tasks"] for r in index["funnel"]][:7] == [1, 1, 1, 1, 1, 1, 1]
    # the offline generator's mutants can pass every check: such a task is named (one funnel row more)
    assert len(index["funnel"]) == 7 + bool(index["surviving_faulty"])
    task = out / "wordstat-top"
    manifest = read_manifest(task / "panel" / "manifest.json").model_dump()
    roles = [c["role"] for c in manifest["candidates"]]
    assert roles == ["reference"] + ["alternative"] * 4 + ["invalid"] * 5
    assert all(c["generator"] == "offline" for c in manifest["candidates"][1:])
    assert manifest["budget"]["used"] == index["outputs"]["wordstat-top"] <= 30
    assert read_task_toml(task / "task.toml").metadata.source == "created"
    instruction = (task / "instruction.md").read_text()
    assert "## Bug report" in instruction and "```python" in instruction
    assert verify_pack(out, workers=2).ok
    # resumable: a second run keeps the finished task and rewrites the same index
    again = CliRunner().invoke(main, ["pack", "create", str(_sources(tmp_path / "x")), "--out", str(out), "--json"])
    assert again.exit_code == 0 and json.loads(again.stdout)["funnel"] == index["funnel"]


def test_pack_create_with_the_model_generator_through_a_scripted_model(tmp_path, monkeypatch):
    monkeypatch.setenv("TESTHELIX_CACHE_DIR", str(tmp_path / "cache"))
    model = ScriptedModel(_replies())
    sources = find_sources([_sources(tmp_path)])
    with create_executor(workers=2) as executor:
        index = create_pack(sources, tmp_path / "pack", ModelGenerator(model, "test:scripted"),
                            executor_verifier(executor), budget=30, criterion=Diversity(), seed=42, with_bank=False,
                            log=lambda s: None)
    assert model.remaining == 0 and index["outputs"] == {"wordstat-top": 14}
    assert index["tasks"] == ["wordstat-top"], index["excluded"]
    manifest = read_manifest(tmp_path / "pack" / "wordstat-top" / "panel" / "manifest.json").model_dump()
    by_role = {c["provenance"]: c for c in manifest["candidates"]}
    assert all(c["generator"] == "model:test:scripted" for c in manifest["candidates"][1:])
    assert all("(simulated test double)" in p for p in by_role if p != "the source's reference")
    # the wrong "alternative" was labelled by the verifier: it is never among the valid programs
    valid_ids = [c["id"] for c in manifest["candidates"] if c["label"] == "valid"]
    assert "g04" not in valid_ids
    assert manifest["initial"]["generator"] == "model:test:scripted"
    state = json.loads((tmp_path / ".pack.create-state" / "wordstat-top.json").read_text())
    assert state["gated"] == {"empty submission": 1, "exact duplicate": 1, "not applicable": 1}
    assert state["labels"] == {"invalid": 7, "valid": 4}
    assert verify_pack(tmp_path / "pack", workers=2).ok
