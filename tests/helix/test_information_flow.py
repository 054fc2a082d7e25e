"""Information flow: hidden task material never reaches a simulated model.

What the simulation bank of a task may be built from (testhelix/pack/build.py), and nothing else:
(1) the initial program (the reference with the task's defect: public anyway), (2) the kata's
hand-written candidate repairs of that defect in `mutations.toml` (`fixes` and `wrong_fixes`),
which the build keeps or drops by running the trusted tests, so a bank holds a correct repair when
the kata has one (a model of an agent able to write the right fix; the fix is the reference's text
at the defect, which is why the simulated agents' preferred repair behaves like the reference),
and (3) the kata's bank tests. Its labels are runs of (3) on (1) and (2) only.
`test_the_bank_holds_only_its_allowed_build_inputs` checks (2): every bank repair of every bundled
task is exactly one of those candidate repairs -- no alternative, no invalid candidate, no other
program.

Then, for a few tasks, a decoy copy replaces everything hidden -- the panel's labels are swapped
(alternatives become invalid candidates and invalid candidates valid alternatives), the reference
is replaced by another program and the trusted tests by a decoy test -- and its bank is relabelled
afresh by the pack's own labelling (`relabel_task_bank`). The intact and the decoy copy are played
in two separate processes (tests/fixtures/flow/probe.py), each with its own executor, outcome
cache and cache folder, so nothing one side executed can be read back by the other: every
trajectory, selection and submitted suite must be byte-identical. The positive control plants a
leak (a simulated model that seeds itself from the reference's digest) and must be caught.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from testhelix.core.bundled_data import bundled_pack
from testhelix.core.digest import tree_sha256
from testhelix.pack.bank import dump_json, relabel_task_bank
from testhelix.pack.kata import load_kata, write_variant
from testhelix.tasks.task import load_task

TASKS = ("katas-interval_merge-m04", "katas-lru_cache-m05")
LABELS = ("sim:weak/A", "sim:strong/C")
PROBE = Path(__file__).resolve().parents[1] / "fixtures" / "flow" / "probe.py"
KATAS_SRC = Path(__file__).resolve().parents[2] / "tasks" / "katas-src"
DECOY_TEST = "def test_decoy_trusted_test():\n    assert False, 'decoy: the real trusted tests were replaced'\n"


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


def play(tmp_path: Path, task_id: str, labels: tuple[str, ...], plant: bool = False) -> tuple[dict, dict]:
    """The intact and the decoy copy, each played in a process of its own (at the same time)."""
    source = bundled_pack("katas") / task_id
    procs = []
    for side in ("intact", "decoy"):
        task_dir = tmp_path / side / task_id
        shutil.copytree(source, task_dir)
        if side == "decoy":
            make_decoy(task_dir)
            assert load_task(task_dir).reference.sha256 != load_task(tmp_path / "intact" / task_id).reference.sha256
        env = os.environ | {"TESTHELIX_CACHE_DIR": str(tmp_path / f"cache-{side}")}
        cmd = [sys.executable, str(PROBE), str(task_dir), str(tmp_path / f"{side}.json"), *labels,
               *(["--plant"] if plant else [])]
        procs.append(subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    for proc in procs:
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err[-3000:]
    return (json.loads((tmp_path / "intact.json").read_text()), json.loads((tmp_path / "decoy.json").read_text()))


def differences(intact: dict, decoy: dict) -> list[str]:
    out = []
    for label, a in intact.items():
        b = decoy[label]
        assert a["trajectories"], f"{label}: no trajectory was saved"
        if a["trajectories"].keys() != b["trajectories"].keys():
            out.append(f"{label}: sessions differ")
        out += [f"{label}: {name} differs" for name in a["trajectories"]
                if a["trajectories"][name] != b["trajectories"].get(name)]
        out += [f"{label}: {key} differs" for key in ("rule", "pair", "suite", "events") if a[key] != b[key]]
    return out


@pytest.mark.slow
@pytest.mark.parametrize("task_id", TASKS)
def test_hidden_material_does_not_reach_simulated_models(task_id, tmp_path):
    intact, decoy = play(tmp_path, task_id, LABELS)
    assert differences(intact, decoy) == []


@pytest.mark.slow
def test_a_planted_leak_is_caught(tmp_path):
    intact, decoy = play(tmp_path, TASKS[0], LABELS[:1], plant=True)
    assert differences(intact, decoy), "the planted leak (agent seeded by the reference's digest) went unseen"


def test_the_bank_holds_only_its_allowed_build_inputs(tmp_path):
    pack, made = bundled_pack("katas"), {}
    checked = 0
    for task_dir in sorted(pack.glob("katas-*")):
        meta = load_task(task_dir)
        kata_name, defect = task_dir.name.removeprefix("katas-").rsplit("-", 1)
        kata = load_kata(KATAS_SRC / kata_name)
        mutation = next(m for m in kata.mutations if m.id == defect)
        allowed = set()
        for i, fix in enumerate((*mutation.fixes, *mutation.wrong_fixes)):
            key = (kata_name, defect, i)
            if key not in made:
                made[key] = tree_sha256(write_variant(kata, tmp_path / "-".join(map(str, key)), mutation, fix))
            allowed.add(made[key])
        for repair in sorted((task_dir / "bank" / "repairs").iterdir()):
            assert tree_sha256(repair) in allowed, f"{meta.id}: bank repair {repair.name} is not a candidate repair of {defect}"
            checked += 1
    assert checked > 300
