"""Common random numbers, end to end (testhelix/llm/sim/draws.py): on a sample of bundled tasks,
a strategy edit that carries no cue gives byte-identical simulated behaviour to its parent (every
reply of every session, the selection and the submitted suite), and an edit with a cue changes
only what the cue table says (`broaden`: each first suite holds the parent's tests plus one guard)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from testhelix.core.bundled_data import bundled_pack
from testhelix.helix.config import get_config
from testhelix.helix.runner import HelixRunner
from testhelix.llm.registry import model_ref
from testhelix.store.runstore import RunStore
from testhelix.strategy.model import Strategy, initial_strategy
from testhelix.tasks.task import load_task

TASKS = ("katas-interval_merge-m04", "katas-lru_cache-m05", "katas-calc_cli-m02")
SUITE = "suite/test_reproduction.py"

pytestmark = pytest.mark.slow


def with_fields(**fields) -> Strategy:
    return Strategy.model_validate(initial_strategy().model_dump(mode="json") | fields)


def replies(root: Path, executor, task_id: str, strategy: Strategy, model: str = "sim:weak") -> dict:
    """What the simulated models did: every reply (text and tool calls) of every session, and the result."""
    runner = HelixRunner(RunStore(root / "store"), executor, root / "work", coverage=False, panel=False)
    try:
        result = runner.run_one(load_task(bundled_pack("katas") / task_id), strategy, get_config("C"), model_ref(model),
                                f"{model}/C", record=False)
    finally:
        assert runner.store is not None
        runner.store.close()
    played = next((root / "work").glob(f"*/{task_id}"))
    sessions = {}
    for path in sorted(played.glob("pair*/trajectory-*.json")):
        messages = json.loads(path.read_text())["messages"]
        sessions[str(path.relative_to(played))] = [(m["content"], m.get("tool_calls")) for m in messages
                                                   if m["role"] == "assistant"]
    return {"sessions": sessions, "rule": result.rule, "pair": result.detail.pair, "F": result.metrics.indicators.F,
            "suite": result.suite_digest}


def first_suites(behaviour: dict) -> list[list[str]]:
    out = []
    for name, turns in sorted(behaviour["sessions"].items()):
        if "generation" not in name:
            continue
        for _, calls in turns:
            written = [c for c in calls or [] if c["name"] == "write_file" and (c["arguments"] or {}).get("path") == SUITE]
            if written:
                out.append(re.findall(r"^def (test_\w+)\(", written[0]["arguments"]["content"], re.M))
                break
    return out


@pytest.mark.parametrize("task_id", TASKS)
def test_cue_free_edits_replay_the_parent_and_a_cue_changes_only_its_effect(task_id, executor, tmp_path):
    parent = replies(tmp_path / "parent", executor, task_id, initial_strategy())
    assert parent["sessions"], "no session was recorded"
    context = load_task(bundled_pack("katas") / task_id).context
    other = next(c for c in ("visual", "framework", "performance") if c != context)
    for i, edit in enumerate((with_fields(guidance="Keep a tidy workspace and write clear test names."),
                              with_fields(skillRoutes={other: ["boundary-values"]}))):
        assert replies(tmp_path / f"free{i}", executor, task_id, edit) == parent, f"cue-free edit {i} changed behaviour"
    broad = replies(tmp_path / "broad", executor, task_id, with_fields(guidance="Add a regression test next to the fix."))
    before, after = first_suites(parent), first_suites(broad)
    assert before and len(before) == len(after)
    for old, new in zip(before, after):
        assert new[:len(old)] == old and len(new) == len(old) + 1, (old, new)
