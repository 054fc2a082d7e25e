"""Information flow: hidden task material never reaches a simulated model.

For a few bundled tasks, a decoy copy replaces everything hidden -- the panel's labels are swapped
(alternatives become invalid candidates and invalid candidates valid alternatives), the reference
is replaced by another program and the trusted tests by a decoy test -- and its simulation bank is
relabelled afresh by the pack's own labelling (`relabel_task_bank`), as a rebuild would label it.
`sim:weak` and `sim:strong` then play configurations A and C on the intact and on the decoy copy:
every trajectory, every selection and every submitted suite must be byte-identical. If a label the
simulation acts on were measured on hidden material, or a simulated model read a hidden file, the
decoy would change what it does.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from testhelix.digest import tree_sha256
from testhelix.execution.executor import default_executor
from testhelix.helix.config import get_config
from testhelix.helix.runner import HelixRunner
from testhelix.pack.bank import dump_json, relabel_task_bank
from testhelix.paths import bundled_pack
from testhelix.store import RunStore
from testhelix.strategy.model import initial_strategy
from testhelix.tasks.task import load_task

TASKS = ("katas-interval_merge-m04", "katas-lru_cache-m05", "katas-semver_range-m01")
MODELS = ("sim:weak", "sim:strong")
CONFIGS = ("A", "C")
DECOY_TEST = "def test_decoy_trusted_test():\n    assert False, 'decoy: the real trusted tests were replaced'\n"


@pytest.fixture(scope="module")
def executor():
    ex = default_executor(workers=2)
    yield ex
    ex.close()


def make_decoy(task_dir: Path) -> None:
    manifest_path = task_dir / "panel" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    swap = {"alternative": ("invalid", "invalid"), "invalid": ("alternative", "valid")}
    candidates = manifest["candidates"]
    for c in candidates:
        if c["role"] in swap:
            c["role"], c["label"] = swap[c["role"]]
    # the reference becomes another program: the first (now "valid") former invalid candidate
    stand_in = next(c for c in candidates if c["role"] == "alternative")
    reference = next(c for c in candidates if c["role"] == "reference")
    shutil.rmtree(task_dir / reference["artifact"])
    shutil.copytree(task_dir / stand_in["artifact"], task_dir / reference["artifact"])
    reference["sha256"] = tree_sha256(task_dir / reference["artifact"])
    dump_json(manifest, manifest_path)
    shutil.rmtree(task_dir / "tests")
    (task_dir / "tests").mkdir()
    (task_dir / "tests" / "test_decoy.py").write_text(DECOY_TEST)
    # relabel the bank the way a rebuild of this (decoy) task would label it
    dump_json(relabel_task_bank(task_dir, workers=1), task_dir / "bank" / "bank.json")


def _behaviour(root: Path, executor, task_dir: Path, model: str, config: str) -> dict:
    runner = HelixRunner(RunStore(root / "store"), executor, root / "work", coverage=False, panel=False)
    try:
        result = runner.run_one(load_task(task_dir), initial_strategy(), get_config(config), model,
                                f"{model}/{config}", record=False)
    finally:
        runner.store.close()
    work = next((root / "work").glob(f"*/{task_dir.name}"))
    trajectories = {str(p.relative_to(work)): p.read_bytes() for p in sorted(work.glob("pair*/trajectory-*.json"))}
    return {"trajectories": trajectories, "rule": result.rule, "pair": result.detail["pair"],
            "suite": result.row["suite_digest"], "events": json.dumps(result.detail["events"], sort_keys=True)}


@pytest.mark.slow
@pytest.mark.parametrize("task_id", TASKS)
def test_hidden_material_does_not_reach_simulated_models(task_id, executor, tmp_path):
    source = bundled_pack("katas") / task_id
    intact, decoy = tmp_path / "intact" / task_id, tmp_path / "decoy" / task_id
    shutil.copytree(source, intact)
    shutil.copytree(source, decoy)
    make_decoy(decoy)
    assert load_task(decoy).reference.sha256 != load_task(intact).reference.sha256
    for model in MODELS:
        for config in CONFIGS:
            a = _behaviour(tmp_path / "runs-intact" / model / config, executor, intact, model, config)
            b = _behaviour(tmp_path / "runs-decoy" / model / config, executor, decoy, model, config)
            assert a["trajectories"], f"{model}/{config}: no trajectory was saved"
            assert a["trajectories"].keys() == b["trajectories"].keys(), f"{model}/{config}: sessions differ"
            for name in a["trajectories"]:
                assert a["trajectories"][name] == b["trajectories"][name], f"{model}/{config}: {name} differs"
            assert (a["rule"], a["pair"], a["suite"], a["events"]) == (b["rule"], b["pair"], b["suite"], b["events"])
