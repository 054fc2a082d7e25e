"""Bundled packs: the shipped archive, the user cache it unpacks into, and names on the command line.

Most tests bundle the small fixture pack into a temporary data folder (seconds); one test unpacks
the real katas archive and checks it against the manifest and the kata sources."""

from __future__ import annotations

import json
import multiprocessing
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from testhelix.commands.cli import main as helix_cli
from testhelix.core import bundled_data
from testhelix.core.bundled_data import recorded_pack, resolve
from testhelix.core.digest import tree_sha256
from testhelix.core.errors import UserError
from testhelix.core.paths import splits_dir, tasks_dir
from testhelix.pack.bundle_writer import write_archive, write_manifest

FIXTURE_PACK = Path(__file__).resolve().parents[1] / "fixtures" / "tasks" / "pack"
BIN = Path(sys.executable).parent


@pytest.fixture
def data(tmp_path, monkeypatch):
    """A data folder bundling the fixture pack as `fx`, and an empty user cache."""
    tasks = tmp_path / "data" / "tasks"
    (tasks / "fx-src").mkdir(parents=True)
    (tasks / "fx-src" / "kata.toml").write_text("[kata]\n")
    write_archive(FIXTURE_PACK, tasks / "fx.tar.xz")
    write_manifest("fx", FIXTURE_PACK, tasks / "fx.tar.xz", tasks / "fx-src", 42)
    monkeypatch.setattr(bundled_data, "_tasks_dir", lambda: tasks)
    monkeypatch.setenv(bundled_data.CACHE_ENV, str(tmp_path / "cache"))
    return tasks


def test_archive_is_byte_identical_for_identical_trees_and_keeps_exec_bits(tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(FIXTURE_PACK, copy)
    (copy / "fx-clamp-m01" / "run.sh").write_text("#!/bin/sh\n")
    (copy / "fx-clamp-m01" / "run.sh").chmod(0o700)
    (copy / "fx-clamp-m01" / "__pycache__").mkdir(exist_ok=True)
    (copy / "fx-clamp-m01" / "__pycache__" / "x.pyc").write_bytes(b"cache")   # left out, as by the digest
    write_archive(copy, tmp_path / "a.tar.xz")
    (copy / "fx-clamp-m01" / "task.toml").touch()                                 # new mtime: same archive
    write_archive(copy, tmp_path / "b.tar.xz")
    assert (tmp_path / "a.tar.xz").read_bytes() == (tmp_path / "b.tar.xz").read_bytes()
    out = tmp_path / "out"
    bundled_data.extract_archive(tmp_path / "a.tar.xz", out)
    assert tree_sha256(out) == tree_sha256(copy)
    assert (out / "fx-clamp-m01" / "run.sh").stat().st_mode & 0o777 == 0o755
    assert (out / "fx-clamp-m01" / "task.toml").stat().st_mode & 0o777 == 0o644
    assert not (out / "fx-clamp-m01" / "__pycache__").exists()


def test_extraction_refuses_entries_outside_the_pack(tmp_path):
    evil = tmp_path / "evil.tar.xz"
    with tarfile.open(evil, "w:xz") as tar:
        info = tarfile.TarInfo("../escaped.txt")
        tar.addfile(info)
    with pytest.raises(UserError, match="outside the pack"):
        bundled_data.extract_archive(evil, tmp_path / "out")
    assert not (tmp_path / "escaped.txt").exists()


def test_first_use_unpacks_into_the_cache_then_reuses_it(data, tmp_path, monkeypatch):
    lines: list[str] = []
    folder = bundled_data.pack_dir("fx", lines.append)
    entry = bundled_data.bundled_packs()["fx"]
    assert folder == tmp_path / "cache" / "packs" / f"fx-{entry.tree_sha256[:16]}" / "fx"
    assert tree_sha256(folder) == entry.tree_sha256 and any("unpacking 2 tasks" in line for line in lines)
    monkeypatch.setattr(bundled_data, "extract_archive", lambda *a: pytest.fail("unpacked a second time"))
    assert bundled_data.pack_dir("fx") == folder
    assert not [p for p in folder.parent.iterdir() if p.name.startswith(".fx.")]   # no temporary left


@pytest.mark.parametrize("damage", ["edit", "delete", "add", "truncate_folder"])
def test_a_damaged_cache_is_detected_and_unpacked_again(data, damage):
    folder = bundled_data.pack_dir("fx")
    target = folder / "fx-clamp-m01" / "task.toml"
    if damage == "edit":
        target.write_text(target.read_text() + "\n# edited\n")
    elif damage == "delete":
        target.unlink()
    elif damage == "add":
        (folder / "fx-clamp-m01" / "extra.py").write_text("x = 1\n")
    else:
        shutil.rmtree(folder / "fx-stack-m02")
    lines: list[str] = []
    assert bundled_data.pack_dir("fx", lines.append) == folder
    assert tree_sha256(folder) == bundled_data.bundled_packs()["fx"].tree_sha256
    assert any("does not match its digest" in line for line in lines)


def test_a_partial_unpack_is_never_used(data, monkeypatch):
    """A process killed while unpacking leaves only its temporary folder; the next use unpacks."""
    def killed(archive, dest):
        (dest / "fx-clamp-m01").mkdir()
        raise KeyboardInterrupt
    real = bundled_data.extract_archive
    monkeypatch.setattr(bundled_data, "extract_archive", killed)
    with pytest.raises(KeyboardInterrupt):
        bundled_data.pack_dir("fx")
    entry = bundled_data.bundled_packs()["fx"]
    assert not (bundled_data.cache_slot(entry) / "fx").exists()
    monkeypatch.setattr(bundled_data, "extract_archive", real)
    assert tree_sha256(bundled_data.pack_dir("fx")) == entry.tree_sha256


def test_a_tampered_archive_is_refused(data):
    archive = data / "fx.tar.xz"
    archive.write_bytes(archive.read_bytes()[:-10])
    with pytest.raises(UserError, match="does not match its sha256"):
        bundled_data.pack_dir("fx")


def _race(tasks: str, cache: str, out) -> None:
    import os

    os.environ[bundled_data.CACHE_ENV] = cache
    bundled_data._tasks_dir = lambda: Path(tasks)
    out.put(str(bundled_data.pack_dir("fx")))


def test_two_processes_unpacking_at_once_get_one_complete_pack(data, tmp_path):
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    procs = [ctx.Process(target=_race, args=(str(data), str(tmp_path / "cache"), out)) for _ in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0, 0]
    folders = {out.get(timeout=5) for _ in procs}
    assert len(folders) == 1
    assert tree_sha256(Path(folders.pop())) == bundled_data.bundled_packs()["fx"].tree_sha256


def test_a_path_wins_over_a_bundled_name_and_the_note_says_so(data, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    found = resolve("fx", "pack")
    assert found is not None and found.note is not None
    assert found.bundled and found.path == bundled_data.pack_dir("fx") and "using the bundled pack" in found.note
    (tmp_path / "fx").mkdir()
    found = resolve("fx", "pack")
    assert found is not None and found.note is not None
    assert not found.bundled and found.path == Path("fx") and "a path wins over a name" in found.note
    assert resolve("nothing", "pack") is None
    plain = resolve(str(FIXTURE_PACK), "pack")
    assert plain is not None
    assert plain.path == FIXTURE_PACK and plain.note is None


def test_a_cleared_cache_folder_recorded_in_a_run_is_unpacked_again(data):
    folder = bundled_data.pack_dir("fx")
    shutil.rmtree(folder.parent)
    assert recorded_pack(folder) == folder and tree_sha256(folder) == bundled_data.bundled_packs()["fx"].tree_sha256
    assert recorded_pack(folder.parent / "elsewhere") == folder.parent / "elsewhere"


def run_cli(*args, cwd=None, env_cache=None):
    env = None
    if env_cache is not None:
        import os

        env = {**os.environ, bundled_data.CACHE_ENV: str(env_cache)}
    return subprocess.run([str(BIN / "testhelix"), *args], capture_output=True, text=True, cwd=cwd, env=env)


def test_names_on_the_command_line(tmp_path):
    """Bundled split file and strategy by name, from a folder outside the checkout; unknown names
    fail with exit 2 naming the option and the bundled names."""
    done = run_cli("strategy", "validate", "initial", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "strategy 'initial': using the bundled strategy" in done.stderr
    bad = run_cli("run", "--pack", "katas-nope", "--split", "all", "--config", "A", "--model", "sim:strong",
                  "--run", str(tmp_path / "r"), cwd=tmp_path)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    names = ", ".join(sorted(bundled_data.bundled_packs()))
    assert "'--pack': katas-nope: no such folder" in bad.stderr and f"(bundled: {names})" in bad.stderr
    bad = run_cli("strategy", "validate", "initial-nope", cwd=tmp_path)
    assert bad.returncode == 2 and "no bundled strategy has that name either (bundled: initial)" in bad.stderr


def test_pack_list_shows_the_bundled_packs_without_unpacking(tmp_path):
    done = run_cli("pack", "list", "--json", env_cache=tmp_path / "cache")
    assert done.returncode == 0, done.stderr
    rows = {row["name"]: row for row in json.loads(done.stdout)["packs"]}
    assert sorted(rows) == sorted(bundled_data.bundled_packs()) and {"humaneval", "katas", "mbpp"} <= set(rows)
    assert rows["katas"]["tasks"] == 312 and all(row["cached"] is None for row in rows.values())
    archives = [n for n, p in bundled_data.bundled_packs().items() if not p.members]
    assert len(archives) >= 3 and sum(rows[n]["tasks"] for n in archives) >= 1000   # three sources, 1,000+ tasks
    for name, row in rows.items():
        entry = bundled_data.bundled_packs()[name]
        assert row["tree_sha256"] == entry.tree_sha256 and row["tasks"] == len(entry.task_ids) > 0
    assert not (tmp_path / "cache").exists()


def test_the_manifest_matches_the_archive_and_the_kata_sources():
    """Editing a kata without `testhelix pack build` + `testhelix pack bundle` fails here."""
    entry = bundled_data.bundled_packs()["katas"]
    assert bundled_data.file_sha256(tasks_dir() / entry.archive) == entry.archive_sha256
    assert tree_sha256(tasks_dir() / entry.source) == entry.source_sha256
    split = json.loads((splits_dir() / "katas.json").read_text())
    assert sorted(t for s in split["splits"].values() for t in s) == sorted(entry.task_ids)


def test_the_humaneval_manifest_matches_its_archive_and_split_file():
    """`pack create --humaneval` + `pack bundle --name humaneval` + `splits make` stay in step."""
    entry = bundled_data.bundled_packs()["humaneval"]
    assert bundled_data.file_sha256(tasks_dir() / entry.archive) == entry.archive_sha256
    assert (tasks_dir() / entry.archive).stat().st_size < 2_000_000
    assert entry.source == "HumanEval.jsonl.gz" and all(t.startswith("humaneval-") for t in entry.task_ids)
    split = json.loads((splits_dir() / "humaneval.json").read_text())
    assert split["pack"] == "humaneval"
    assert sorted(t for s in split["splits"].values() for t in s) == sorted(entry.task_ids)


@pytest.mark.slow
def test_the_real_archive_unpacks_to_the_manifest_digest(tmp_path, monkeypatch):
    monkeypatch.setenv(bundled_data.CACHE_ENV, str(tmp_path / "cache"))
    folder = bundled_data.pack_dir("katas")
    entry = bundled_data.bundled_packs()["katas"]
    assert tree_sha256(folder) == entry.tree_sha256
    assert sorted(p.name for p in folder.iterdir() if (p / "task.toml").is_file()) == list(entry.task_ids)
    code = None
    try:
        helix_cli(["splits", "check", "katas", "--pack", "katas"])
    except SystemExit as done:
        code = done.code
    assert code in (0, None)


def test_an_installed_copy_never_writes_into_its_own_files(monkeypatch, capsys):
    from testhelix.commands import pack as pack_cmd

    monkeypatch.setattr(pack_cmd, "is_installed", lambda: True)
    for args in (["pack", "build"], ["pack", "bundle"]):
        with pytest.raises(SystemExit) as done:
            helix_cli(args)
        err = capsys.readouterr().err
        assert done.value.code == 2 and "--out: give the" in err and "Traceback" not in err


def test_a_composite_pack_is_assembled_from_its_member_packs_and_checked(data, tmp_path):
    ids = sorted(p.name for p in FIXTURE_PACK.iterdir() if (p / "task.toml").is_file())[:2]
    (data / "combo.json").write_text('{"selected": "by a test"}\n')
    built = tmp_path / "combo"
    bundled_data.assemble_composite((("fx", tuple(ids)),), data / "combo.json", built, lambda m: FIXTURE_PACK)
    entry = bundled_data.BundledPack("combo", "", "", tree_sha256(built), tuple(ids), {"general": 2}, "combo.json",
                               bundled_data.file_sha256(data / "combo.json"), 42, (("fx", tuple(ids)),))
    doc = json.loads((data / bundled_data.MANIFEST).read_text())
    doc["packs"]["combo"] = entry.to_json()
    (data / bundled_data.MANIFEST).write_text(json.dumps(doc))
    assert bundled_data.bundled_packs()["combo"] == entry
    folder = bundled_data.pack_dir("combo")
    assert sorted(p.name for p in folder.iterdir()) == sorted([*ids, "combo.json"])
    assert tree_sha256(folder) == entry.tree_sha256 and bundled_data.pack_dir("combo") == folder
    (data / "combo.json").write_text("{}\n")                   # the selection file changed: refused
    shutil.rmtree(folder)
    with pytest.raises(UserError, match="combo.json"):
        bundled_data.pack_dir("combo")
