"""A full disk (or another I/O failure) is one line naming the path, exit 2, nothing partial left,
and the command continues exactly once space is freed.

Two ways: OSError(ENOSPC) injected at the atomic-write points of every output, in process; and a
real small tmpfs in a private mount namespace (`unshare -rm`, skipped where unavailable) on which a
search and a freeze run out of space for real."""

import errno
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from autosaddler.cli import main as saddler_cli
from testhelix.commands.cli import main as helix_cli
from testhelix.core import atomic

from .conftest import HERE, dag_rows

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]


def run_main(main, args, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([str(a) for a in args])
    out = capsys.readouterr()
    return exit_info.value.code, out.out, out.err


@pytest.fixture
def full_disk(monkeypatch):
    """Every atomic output fails as on a full disk, when the finished file would be put in place."""
    def no_space(src, dst, *a, **k):
        raise OSError(errno.ENOSPC, "No space left on device", str(dst))
    monkeypatch.setattr(atomic.os, "replace", no_space)
    monkeypatch.setattr(atomic.os, "link", no_space)
    return monkeypatch


OUTPUTS = [
    ("freeze", lambda run, out: (saddler_cli, ["freeze", run, "--out", out])),
    ("dag --json-out", lambda run, out: (saddler_cli, ["dag", run, "--json-out", out])),
    ("dag --graphml", lambda run, out: (saddler_cli, ["dag", run, "--graphml", out])),
    ("strategy schema --out", lambda run, out: (helix_cli, ["strategy", "schema", "--out", out])),
    ("splits make --out", lambda run, out: (helix_cli, ["splits", "make", "--pack", "katas",
                                                             "--out", out])),
]


@pytest.mark.parametrize("name,make", OUTPUTS, ids=[o[0] for o in OUTPUTS])
def test_full_disk_at_every_output(name, make, reference, full_disk, tmp_path, capsys):
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = out_dir / "result.json"
    main, args = make(reference[0], out)
    code, _, err = run_main(main, args, capsys)
    assert code == 2 and "Traceback" not in err
    assert f"error: no space left on device ({out})" in err
    assert list(out_dir.iterdir()) == []  # nothing partial, no temporary file
    full_disk.undo()  # space freed: the same command now succeeds
    code, _, err = run_main(main, args, capsys)
    assert code == 0, err
    assert out.is_file() and [p.name for p in out_dir.iterdir()] == ["result.json"]


def test_export_of_an_unfrozen_file_is_refused(tmp_path, capsys):
    code, _, err = run_main(saddler_cli, ["export", ROOT / "strategies" / "initial.json"], capsys)
    assert code == 2 and "not a frozen strategy" in err


UNSHARE = shutil.which("unshare")


def _namespace_works() -> bool:
    if not UNSHARE:
        return False
    probe = subprocess.run([UNSHARE, "-rm", "sh", "-c", "mount -t tmpfs -o size=1m tmpfs /mnt 2>/dev/null || "
                            "mount -t tmpfs -o size=1m tmpfs /tmp"], capture_output=True)
    return probe.returncode == 0


@pytest.mark.skipif(not _namespace_works(), reason="no private mount namespace (unshare -rm) for a small tmpfs")
def test_search_and_freeze_on_a_really_full_disk(reference, tmp_path):
    """A 5 MB tmpfs fills during the search: exit 2 naming the path; after the mount grows, the
    resumed search ends with the uninterrupted DAG. Then a freeze onto a full tmpfs leaves nothing
    behind and succeeds once a filler file is removed."""
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    keep = tmp_path / "kept"
    py, worker = sys.executable, HERE / "search_worker.py"
    autosaddler = Path(sys.executable).parent / "autosaddler"
    script = f"""
set -u
mount -t tmpfs -o size=5m tmpfs {mnt}
{py} {worker} run {mnt}/run > {tmp_path}/first.out 2> {tmp_path}/first.err; echo $? > {tmp_path}/first.rc
ls -a {mnt}/run > {tmp_path}/first.ls
mount -o remount,size=64m {mnt}
{py} {worker} run {mnt}/run > /dev/null 2> {tmp_path}/second.err; echo $? > {tmp_path}/second.rc
cp -r {mnt}/run {keep}
mkdir {mnt}/frozen && mount -t tmpfs -o size=64k tmpfs {mnt}/frozen
head -c 65536 /dev/zero > {mnt}/frozen/filler 2>/dev/null
{autosaddler} freeze {mnt}/run --out {mnt}/frozen/best.json 2> {tmp_path}/freeze1.err; echo $? > {tmp_path}/freeze1.rc
ls -a {mnt}/frozen > {tmp_path}/freeze1.ls
rm {mnt}/frozen/filler
{autosaddler} freeze {mnt}/run --out {mnt}/frozen/best.json > /dev/null 2> {tmp_path}/freeze2.err; echo $? > {tmp_path}/freeze2.rc
cp {mnt}/frozen/best.json {tmp_path}/best.json
"""
    assert UNSHARE is not None  # the skip condition
    subprocess.run([UNSHARE, "-rm", "sh", "-c", script], check=True, timeout=600)

    def read(name: str) -> str:
        return (tmp_path / name).read_text()

    assert read("first.rc").strip() == "2", read("first.err")
    assert read("first.err").startswith("error: no space left on device (") and "Traceback" not in read("first.err")
    assert not any(n.startswith((".snapshot-", ".run.duckdb.creating")) for n in read("first.ls").split())
    assert read("second.rc").strip() == "0", read("second.err")
    assert dag_rows(keep) == reference[1]
    assert read("freeze1.rc").strip() == "2" and "no space left on device" in read("freeze1.err")
    assert sorted(read("freeze1.ls").split()) == [".", "..", "filler"]
    assert read("freeze2.rc").strip() == "0", read("freeze2.err")
    assert json.loads(read("best.json"))["hash"]
