"""Damaged and foreign stores under every command that only reads (issue #35): truncated files,
flipped bytes, files that are not run stores and run stores of another kind. Every reader exits 2
with one message or (a flip DuckDB never reads) answers normally; none prints a traceback, none
calls a damaged store 'in progress', and the run folder stays byte-identical (no migration, no
table added, no file left behind by a refused command). In one process through the real entry
points."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import duckdb
import pytest

from autosaddler.cli import main as autosaddler_main
from gtdd.cli import main as gtdd_main
from testhelix.commands.cli import main as th_main
from testhelix.store.runstore import RunStore

MAINS = {"testhelix": th_main, "autosaddler": autosaddler_main, "gtdd": gtdd_main}
READERS = {  # id -> (program, arguments; {run} is the run folder, {out} a folder outside it)
    "sql": ("testhelix", ["sql", "{run}", "SELECT count(*) FROM schema_meta"]),
    "report": ("testhelix", ["report", "{run}"]),
    "th-view": ("testhelix", ["view", "{run}", "--out", "{out}/th.html"]),
    "dag": ("autosaddler", ["dag", "{run}"]),
    "as-view": ("autosaddler", ["view", "{run}", "--out", "{out}/as.html"]),
    "freeze": ("autosaddler", ["freeze", "{run}", "--out", "{out}/frozen.json"]),
    "gtdd-report": ("gtdd", ["report", "{run}"]),
}


def _helix(d: Path) -> None:
    store = RunStore(d)
    store.record_run("sim:strong/A", "helix", {"model": "sim:strong"})
    store.close()


def _search(d: Path) -> None:
    store = RunStore(d)
    store.put_state("meta", {"pack": "p", "model": "sim:strong", "optimizer_model": "sim:strong", "config": {}})
    store.close()


def _gtdd(d: Path) -> None:
    store = RunStore(d)
    store.upsert("gtdd_config", {"key": "config", "config": {"rounds": 2}})
    store.close()


def _foreign_duckdb(d: Path) -> None:
    d.mkdir(parents=True, exist_ok=True)
    conn = duckdb.connect(str(d / "run.duckdb"))
    conn.execute("CREATE TABLE invoices (id INTEGER, total DOUBLE)")
    conn.execute("INSERT INTO invoices VALUES (1, 9.5)")
    conn.close()


def _flip(offset_of_size):
    def damage(path: Path) -> None:
        data = bytearray(path.read_bytes())
        at = offset_of_size(len(data))
        data[at] ^= 0xFF
        path.write_bytes(bytes(data))
    return damage


def _truncate(length_of_size):
    def damage(path: Path) -> None:
        data = path.read_bytes()
        path.write_bytes(data[:length_of_size(len(data))])
    return damage


def _zero(offset_of_size):
    def damage(path: Path) -> None:
        data = bytearray(path.read_bytes())
        at = offset_of_size(len(data))
        data[at:at + 4096] = bytes(4096)
        path.write_bytes(bytes(data))
    return damage


# id -> (how the folder is made, damage to run.duckdb or None, exit codes allowed per reader)
DAMAGES = {
    "truncated to 0 bytes": (_helix, _truncate(lambda n: 0), None),
    "truncated to 100 bytes": (_helix, _truncate(lambda n: 100), None),
    "truncated to half": (_helix, _truncate(lambda n: n // 2), None),
    "last block missing": (_helix, _truncate(lambda n: n - 4096), None),
    "flipped magic": (_helix, _flip(lambda n: 9), None),
    "flipped header 1": (_helix, _flip(lambda n: 4096 + 24), None),
    "flipped header 2": (_helix, _flip(lambda n: 8192 + 24), None),
    "flipped first block": (_helix, _flip(lambda n: 12288 + 64), {0, 2}),
    "flipped middle": (_helix, _flip(lambda n: n // 2 + 7), {0, 2}),
    "flipped near the end": (_helix, _flip(lambda n: n - 100), {0, 2}),
    "zeroed first block": (_helix, _zero(lambda n: 12288), None),
    "text file": (_helix, lambda p: p.write_text("hello, not a database\n"), None),
    "random bytes": (_helix, lambda p: p.write_bytes(hashlib.sha512(b"x").digest() * 256), None),
    "DuckDB file of another program": (_foreign_duckdb, None, None),
}
# A store of another kind: which readers must refuse it (the others may read it; sql reads any).
KINDS = {"helix": (_helix, {"dag", "freeze", "gtdd-report", "as-view"}),
         "search": (_search, {"report", "gtdd-report"}),
         "gtdd": (_gtdd, {"dag", "freeze", "report", "as-view"})}


def _digests(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
            for p in sorted(folder.rglob("*"))}


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """One pristine copy of each folder; each case works on a fresh copy of it."""
    root = tmp_path_factory.mktemp("damaged")
    out = {}
    for name, (make, damage, _) in DAMAGES.items():
        folder = root / name.replace(" ", "-")
        make(folder)
        if damage is not None:
            damage(folder / "run.duckdb")
        out[name] = folder
    for kind, (make, _) in KINDS.items():
        make(root / f"kind-{kind}")
        out[f"kind {kind}"] = root / f"kind-{kind}"
    return out


def _run(program: str, argv: list[str]) -> int:
    try:
        MAINS[program](argv)
    except SystemExit as done:
        return int(done.code or 0)
    return 0


def _check(made_folder: Path, tmp_path: Path, reader: str, allowed: set[int], capsys) -> int:
    run, out = tmp_path / "run", tmp_path / "out"
    shutil.copytree(made_folder, run)
    out.mkdir()
    before = _digests(run)
    program, args = READERS[reader]
    code = _run(program, [a.format(run=run, out=out) for a in args])
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert code in allowed, (code, text[-1500:])
    assert "Traceback" not in text and "in progress" not in text, text[-1500:]
    if code == 2:
        errors = [line for line in captured.err.splitlines() if line.startswith(("error:", "Error:"))]
        assert len(errors) == 1, captured.err
        assert _digests(run) == before and not any(out.iterdir()), "a refused reader left or changed a file"
    else:
        assert {k: v for k, v in _digests(run).items() if k in before} == before, "the store changed"
    return code


@pytest.mark.parametrize("reader", list(READERS))
@pytest.mark.parametrize("damage", list(DAMAGES))
def test_a_damaged_store_is_refused_and_left_as_it_is(damage, reader, made, tmp_path, capsys):
    allowed = DAMAGES[damage][2] or {2}
    if reader == "sql" and damage in ("flipped first block", "flipped middle", "flipped near the end",
                                      "truncated to half", "last block missing"):
        allowed = {0, 2}  # its query reads only schema_meta, which sits before the damage
    _check(made[damage], tmp_path, reader, allowed, capsys)


@pytest.mark.parametrize("reader", list(READERS))
@pytest.mark.parametrize("kind", list(KINDS))
def test_a_store_of_another_kind_is_refused_before_it_is_touched(kind, reader, made, tmp_path, capsys):
    _check(made[f"kind {kind}"], tmp_path, reader, {2} if reader in KINDS[kind][1] else {0, 2}, capsys)


def test_an_old_store_with_an_empty_schema_meta_is_read_not_taken_for_a_foreign_file(tmp_path, capsys):
    conn = duckdb.connect(str(tmp_path / "run.duckdb"))
    conn.execute("CREATE TABLE schema_meta (version INTEGER)")  # an old version's store, nothing applied yet
    conn.close()
    before = _digests(tmp_path)
    assert _run("testhelix", ["sql", str(tmp_path), "SELECT count(*) AS n FROM runs"]) == 0
    assert "n" in capsys.readouterr().out
    assert _digests(tmp_path) == before  # read from a migrated copy: the old file is not migrated in place


WRITERS = {  # a writer given a folder of another kind refuses it before opening the store for writing
    "gtdd experiment": ("gtdd", ["experiment", "--policies", "public-only", "--blocks", "1", "--run", "{run}"]),
    "testhelix run": ("testhelix", ["run", "--pack", "katas", "--split", "all", "--config", "A", "--model",
                                    "sim:strong", "--run", "{run}"]),
    "autosaddler search": ("autosaddler", ["search", "--pack", "katas", "--model", "sim:strong",
                                           "--optimizer-model", "sim:strong", "--run", "{run}"]),
}
FOREIGN_TO = {"gtdd experiment": "helix", "testhelix run": "gtdd", "autosaddler search": "helix"}


@pytest.mark.parametrize("writer", list(WRITERS))
def test_a_writer_refuses_a_folder_of_another_kind_without_touching_it(writer, made, tmp_path, capsys):
    run = tmp_path / "run"
    shutil.copytree(made[f"kind {FOREIGN_TO[writer]}"], run)
    before = _digests(run)
    program, args = WRITERS[writer]
    code = _run(program, [a.format(run=run) for a in args])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err, err[-1500:]
    assert _digests(run) == before  # no table added, no attempt recorded


# Every writer, on a damaged store of its own kind (so no kind check refuses it first): refused
# from a read-only look, exit 2, and the folder byte-identical (the file neither grew nor was
# rewritten in its first blocks, no attempt recorded, no snapshot left).
def _resumable_search(d: Path) -> None:
    """A search store `autosaddler resume` would continue (so only the damage can stop it)."""
    from autosaddler.config import load_config
    from testhelix.core.bundled_data import bundled_pack

    store = RunStore(d)
    store.put_state("meta", {"pack": str(bundled_pack("katas")), "model": "sim:strong", "optimizer_model": "sim:strong",
                             "preset": "demo", "config": load_config("demo", None, {}).model_dump(),
                             "split_file": None, "development_order": "by_context"})
    store.close()


OWN_KIND = {"gtdd experiment": _gtdd, "testhelix run": _helix, "autosaddler search": _resumable_search,
            "autosaddler resume": _resumable_search}
WRITERS_OWN = {**WRITERS, "autosaddler resume": ("autosaddler", ["resume", "{run}"])}
ALWAYS_REFUSED = [name for name, (make, damage, allowed) in DAMAGES.items()
                  if allowed is None and make is _helix and name != "last block missing"]


@pytest.fixture(scope="module")
def own_kind_made(tmp_path_factory):
    root = tmp_path_factory.mktemp("own-kind")
    out = {}
    for writer, make in OWN_KIND.items():
        base = root / writer.replace(" ", "-")
        make(base)
        for damage in [*ALWAYS_REFUSED, "last block missing"]:
            folder = root / f"{writer}-{damage}".replace(" ", "-")
            shutil.copytree(base, folder)
            DAMAGES[damage][1](folder / "run.duckdb")
            out[writer, damage] = folder
    return out


@pytest.mark.parametrize("damage", [*ALWAYS_REFUSED, "last block missing"])
@pytest.mark.parametrize("writer", list(WRITERS_OWN))
def test_a_writer_refuses_a_damaged_store_of_its_own_kind_and_leaves_every_byte(writer, damage, own_kind_made,
                                                                                 tmp_path, capsys):
    run = tmp_path / "run"
    shutil.copytree(own_kind_made[writer, damage], run)
    before = _digests(run)
    program, args = WRITERS_OWN[writer]
    code = _run(program, [a.format(run=run) for a in args])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err, err[-1500:]
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and str(run) in errors[0], err  # one line, naming the store
    assert _digests(run) == before, "a refused writer changed the store"
