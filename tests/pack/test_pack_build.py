"""Building and verifying packs: determinism, labels, panels, banks, tampering, bad input."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from testhelix.commands.cli import main
from testhelix.core.digest import tree_sha256
from testhelix.core.paths import tasks_dir
from testhelix.pack.build import build_pack
from testhelix.pack.runner import run_suite


def _cli(argv: list[str], capsys) -> tuple[int | str | None, str, str]:  # SystemExit.code
    with pytest.raises(SystemExit) as exc:
        main(argv)
    out, err = capsys.readouterr()
    return exc.value.code, out, err


@pytest.fixture(scope="module")
def built(tmp_path_factory, kata_writer) -> tuple[Path, Path]:
    """The rangekit kata built twice (seed 42) into two folders."""
    tmp = tmp_path_factory.mktemp("pack")
    kata_writer(tmp / "src")
    for name in ("a", "b"):
        build_pack(tmp / "src", tmp / name, seed=42, log=lambda line: None)
    return tmp / "a", tmp / "b"


def test_build_is_deterministic(built):
    a, b = built
    assert tree_sha256(a) == tree_sha256(b)
    assert sorted(p.relative_to(a).as_posix() for p in a.rglob("*")) == sorted(p.relative_to(b).as_posix() for p in b.rglob("*"))


def test_build_drops_a_task_whose_labels_do_not_hold(built):
    pack, _ = built
    index = json.loads((pack / "pack.json").read_text())
    assert index["tasks"] == ["katas-rangekit-m1", "katas-rangekit-m2"]
    assert [d["task"] for d in index["dropped"]] == ["katas-rangekit-m6"]
    assert "does not fail the trusted tests" in index["dropped"][0]["reason"]
    assert index["contexts"] == {"algorithm": 2}


def test_task_folder_and_panel(built):
    task = built[0] / "katas-rangekit-m1"
    meta = tomllib.loads((task / "task.toml").read_text())["metadata"]
    assert meta["id"] == "katas-rangekit-m1" and meta["kata"] == "rangekit"
    text = (task / "instruction.md").read_text()
    assert "clamp(15, 0, 10)" in text and "## Specification" in text and "min(x, hi)" not in text
    manifest = json.loads((task / "panel" / "manifest.json").read_text())
    roles = [c["role"] for c in manifest["candidates"]]
    assert roles == ["reference"] + ["alternative"] * 4 + ["invalid"] * 5
    invalid_ids = [c["id"] for c in manifest["candidates"] if c["role"] == "invalid"]
    # m6 is equivalent to the reference, so the remaining pool is exactly: partial fix + m2..m5.
    assert invalid_ids[0] == "inv-m1-wrong0"
    assert sorted(invalid_ids[1:]) == ["inv-m2", "inv-m3", "inv-m4", "inv-m5"]
    for cand in manifest["candidates"]:
        assert tree_sha256(task / cand["artifact"]) == cand["sha256"]
    assert "return lo" in (task / "environment" / "rangekit" / "__init__.py").read_text()
    assert (task / "solution" / "solve.sh").stat().st_mode & 0o111


def test_labels_hold_when_rerun(built):
    task = built[0] / "katas-rangekit-m2"
    manifest = json.loads((task / "panel" / "manifest.json").read_text())
    assert run_suite(task / "tests", task / "environment").status == "fail"
    for cand in manifest["candidates"]:
        expected = "pass" if cand["label"] == "valid" else "fail"
        assert run_suite(task / "tests", task / cand["artifact"]).status == expected, cand["id"]


def test_bank_labels_are_measured_on_the_initial_program_and_own_repairs(built):
    bank = json.loads((built[0] / "katas-rangekit-m2" / "bank" / "bank.json").read_text())
    labels = {t["name"]: t["label"] for t in bank["tests"]}
    assert labels == {"test_smoke_inside": "guard", "test_high_values_clamp_to_hi": "guard",
                      "test_equal_bounds": "reproduces", "test_span_wrong_expectation": "fails-everywhere",
                      "test_describe_exact_text": "guard"}
    equal = next(t for t in bank["tests"] if t["name"] == "test_equal_bounds")
    assert equal["fails_initial"] and len(equal["passes_repairs"]) == 1       # the fix, not the wrong fix
    assert bank["header"].startswith("from rangekit import")
    # neutral repair names; nothing recorded from the reference, the panel or the trusted tests
    assert [r["id"] for r in bank["repairs"]] == ["r1", "r2"]
    assert all(set(r) == {"id", "artifact"} for r in bank["repairs"])
    assert all(set(t) == {"name", "source", "fails_initial", "passes_repairs", "label"} for t in bank["tests"])
    for repair in bank["repairs"]:
        assert (built[0] / "katas-rangekit-m2" / repair["artifact"] / "rangekit" / "__init__.py").is_file()


def test_verify_refuses_a_bank_label_that_does_not_hold(built, tmp_path, capsys):
    pack = tmp_path / "pack"
    shutil.copytree(built[0], pack)
    path = pack / "katas-rangekit-m2" / "bank" / "bank.json"
    bank = json.loads(path.read_text())
    for t in bank["tests"]:
        if t["name"] == "test_span_wrong_expectation":
            t["label"], t["passes_repairs"] = "reproduces", ["r1"]
    path.write_text(json.dumps(bank))
    code, out, _ = _cli(["pack", "verify", str(pack), "--runner", "subprocess"], capsys)
    assert code == 1 and "bank test test_span_wrong_expectation: recorded label 'reproduces'" in out


def test_solve_sh_installs_the_reference(built, tmp_path):
    task = built[0] / "katas-rangekit-m1"
    work = tmp_path / "work"
    shutil.copytree(task / "environment", work)
    subprocess.run(["sh", str(task / "solution" / "solve.sh"), str(work)], check=True)
    assert tree_sha256(work) == tree_sha256(task / "solution" / "program")


def test_verify_accepts_the_built_pack(built, capsys):
    code, out, _ = _cli(["pack", "verify", str(built[0]), "--runner", "subprocess", "--json"], capsys)
    report = json.loads(out)
    assert code == 0 and report["ok"] and report["tasks"] == 2 and report["contexts"] == {"algorithm": 2}


def test_verify_refuses_a_tampered_artifact(built, tmp_path, capsys):
    pack = tmp_path / "pack"
    shutil.copytree(built[0], pack)
    target = pack / "katas-rangekit-m1" / "panel" / "inv-m3" / "rangekit" / "__init__.py"
    target.write_text(target.read_text() + "\n# edited\n")
    code, out, _ = _cli(["pack", "verify", str(pack), "--runner", "subprocess"], capsys)
    assert code == 1
    assert "katas-rangekit-m1" in out and "panel/inv-m3" in out and "does not match its digest" in out


def test_verify_refuses_a_wrong_label(built, tmp_path, capsys):
    """A panel whose 'invalid' candidate is really the reference (digest updated to match)."""
    pack = tmp_path / "pack"
    shutil.copytree(built[0], pack)
    task = pack / "katas-rangekit-m2"
    shutil.rmtree(task / "panel" / "inv-m4")
    shutil.copytree(task / "solution" / "program", task / "panel" / "inv-m4")
    manifest = json.loads((task / "panel" / "manifest.json").read_text())
    for cand in manifest["candidates"]:
        if cand["id"] == "inv-m4":
            cand["sha256"] = tree_sha256(task / "panel" / "inv-m4")
    (task / "panel" / "manifest.json").write_text(json.dumps(manifest))
    code, out, _ = _cli(["pack", "verify", str(pack), "--runner", "subprocess"], capsys)
    assert code == 1 and "candidate inv-m4: expected the trusted tests to FAIL, got pass" in out


def test_bad_src_and_bad_pack_exit_2(tmp_path, capsys):
    code, _, err = _cli(["pack", "build", "--src", str(tmp_path / "nope"), "--out", str(tmp_path / "out")], capsys)
    assert code == 2 and "nope" in err
    code, _, err = _cli(["pack", "verify", str(tmp_path / "nope")], capsys)
    assert code == 2 and "nope" in err
    (tmp_path / "empty").mkdir()
    code, _, err = _cli(["pack", "verify", str(tmp_path / "empty")], capsys)
    assert code == 2 and "no task folders" in err


def test_build_refuses_to_overwrite_a_foreign_folder(kata_src, tmp_path, capsys):
    out = tmp_path / "precious"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    code, _, err = _cli(["pack", "build", "--src", str(kata_src), "--out", str(out)], capsys)
    assert code == 2 and "refusing to overwrite" in err
    assert (out / "notes.txt").read_text() == "keep me"


def test_unknown_kata_filter_exits_2(kata_src, tmp_path, capsys):
    code, _, err = _cli(["pack", "build", "--src", str(kata_src), "--out", str(tmp_path / "o"), "--kata", "nope"], capsys)
    assert code == 2 and "nope" in err


@pytest.mark.slow
def test_bundled_katas_build_and_verify(tmp_path):
    """Two real katas end to end through the command line (about a minute)."""
    src = tasks_dir() / "katas-src"
    katas = [k for k in ("lru_cache", "slugify_text") if (src / k / "kata.toml").is_file()]
    if not katas:
        pytest.skip("the bundled katas are not there")
    cmd = [str(Path(sys.executable).parent / "testhelix")]
    args = [a for k in katas for a in ("--kata", k)]
    for name in ("a", "b"):
        subprocess.run([*cmd, "pack", "build", "--out", str(tmp_path / name), *args], check=True, capture_output=True)
    assert tree_sha256(tmp_path / "a") == tree_sha256(tmp_path / "b")
    proc = subprocess.run([*cmd, "pack", "verify", str(tmp_path / "a"), "--json"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["tasks"] >= 16
