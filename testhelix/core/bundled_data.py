"""Bundled task packs: shipped as one compressed archive, unpacked on first use into a user cache.

Building the kata pack from `tasks/katas-src` runs every trusted test and simulation-bank test
(thousands of sandboxed runs, many minutes on two cores), far too long for a first command. So the
package ships the pack as a deterministic `tasks/<name>.tar.xz` and `tasks/bundled.json`, a
manifest that records the archive's sha256, the unpacked tree's digest (`testhelix.core.digest`), the
task ids and the digest of the kata sources it was built from. `pack_dir(name)` returns the
unpacked folder, unpacking it when needed:

- The cache root is `$TESTHELIX_CACHE_DIR`, else `$XDG_CACHE_HOME/testhelix`, else
  `~/.cache/testhelix`; a pack lives in `packs/<name>-<digest16>/<name>` (the folder keeps the
  pack's name, so `splits/<name>.json` stays its default split file, and two versions never mix).
- Unpacking writes into a temporary folder beside the target, checks the tree digest against the
  manifest and only then renames it into place, so a killed process never leaves a partial pack
  under the final name. A lock file serialises two processes that unpack at the same time.
- Every use compares a cheap fingerprint (path, size, mtime of each file) with the one recorded at
  the last full check; when it differs the tree digest is computed again, and a pack that no
  longer matches (edited, truncated, files missing or added) is unpacked afresh.

Also the one place a command-line name turns into bundled data (`resolve`, see paths.py).
`write_archive` and `write_manifest` (testhelix/pack/bundle_writer.py) are what `testhelix pack bundle`
runs to refresh both files after `testhelix pack build`.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Literal

from testhelix.core.atomic import write_text
from testhelix.core.digest import file_sha256, tree_sha256
from testhelix.core.errors import UserError
from testhelix.core.heartbeat import heartbeat
from testhelix.core.paths import splits_dir, strategies_dir, tasks_dir

MANIFEST = "bundled.json"
CACHE_ENV = "TESTHELIX_CACHE_DIR"
_STAMP = "verified.json"


@dataclass(frozen=True)
class BundledPack:
    """One manifest entry: what the archive must unpack to."""

    name: str
    archive: str            # file name beside the manifest
    archive_sha256: str
    tree_sha256: str        # testhelix.core.digest.tree_sha256 of the unpacked folder
    task_ids: tuple[str, ...]
    contexts: dict[str, int]
    source: str             # what it was built from: the kata source folder beside the manifest, or a data file
    source_sha256: str      # tree digest of that folder (file digest of that file) when the pack was built
    seed: int
    members: tuple[tuple[str, tuple[str, ...]], ...] = ()   # a composite pack: (member pack, task ids)

    @property
    def tasks(self) -> int:
        return len(self.task_ids)

    def to_json(self) -> dict:
        body = {"archive": self.archive, "archive_sha256": self.archive_sha256, "tree_sha256": self.tree_sha256,
                "tasks": list(self.task_ids), "contexts": self.contexts, "source": self.source,
                "source_sha256": self.source_sha256, "seed": self.seed}
        if self.members:
            body["members"] = {name: list(ids) for name, ids in self.members}
        return body


def _tasks_dir() -> Path:

    return tasks_dir()


def manifest_path() -> Path:
    return _tasks_dir() / MANIFEST


def bundled_packs() -> dict[str, BundledPack]:
    """The packs the installed package ships, by name (empty when it ships none)."""
    path = manifest_path()
    if not path.is_file():
        return {}
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
        return {name: BundledPack(name, e["archive"], e["archive_sha256"], e["tree_sha256"], tuple(e["tasks"]),
                                  dict(e["contexts"]), e["source"], e["source_sha256"], int(e["seed"]),
                                  tuple((m, tuple(ids)) for m, ids in sorted(e.get("members", {}).items())))
                for name, e in sorted(doc["packs"].items())}
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise UserError(f"{path}: the bundled-pack manifest is damaged ({err}); reinstall the package") from None


def cache_root() -> Path:
    override = os.environ.get(CACHE_ENV)
    if override:
        return Path(override)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "testhelix"


def cache_slot(pack: BundledPack) -> Path:
    """The folder holding one version of a bundled pack (the pack itself is `slot / name`)."""
    return cache_root() / "packs" / f"{pack.name}-{pack.tree_sha256[:16]}"


def _fingerprint(root: Path) -> str:
    """Cheap change detector: every file's path, size and modification time. It covers more files
    than the tree digest (caches too), so a mismatch only means "compute the digest again"."""
    entries = []
    for folder, _, names in os.walk(root):
        for name in names:
            st = os.lstat(os.path.join(folder, name))
            entries.append(f"{os.path.relpath(os.path.join(folder, name), root)}\0{st.st_size}\0{st.st_mtime_ns}\n")
    return hashlib.sha256("".join(sorted(entries)).encode("utf-8", "surrogateescape")).hexdigest()


def _stamp_ok(slot: Path, pack: BundledPack) -> bool:
    try:
        stamp = json.loads((slot / _STAMP).read_text())
        return stamp.get("tree_sha256") == pack.tree_sha256 and stamp.get("fingerprint") == _fingerprint(slot / pack.name)
    except (OSError, ValueError, AttributeError):
        return False


def _write_stamp(slot: Path, pack: BundledPack) -> None:
    write_text(slot / _STAMP, json.dumps({"tree_sha256": pack.tree_sha256,
                                          "fingerprint": _fingerprint(slot / pack.name)}) + "\n")


@contextmanager
def _locked(slot: Path) -> Iterator[None]:
    lock = slot.parent / f"{slot.name}.lock"
    with open(lock, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def pack_dir(name: str, log: Callable[[str], None] = lambda s: None) -> Path:
    """The unpacked folder of bundled pack `name`, unpacked (or repaired) first when needed."""
    packs = bundled_packs()
    if name not in packs:
        raise UserError(f"{name}: no bundled pack of that name (bundled: {', '.join(packs) or 'none'})")
    pack = packs[name]
    slot = cache_slot(pack)
    target = slot / pack.name
    if target.is_dir() and _stamp_ok(slot, pack):
        return target
    try:
        slot.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise UserError(f"{slot}: cannot create the cache folder for bundled packs ({err.strerror}); "
                        f"set {CACHE_ENV} to a writable folder") from None
    with _locked(slot):
        if target.is_dir():                        # another process may have finished meanwhile
            if _stamp_ok(slot, pack):
                return target
            if tree_sha256(target) == pack.tree_sha256:
                _write_stamp(slot, pack)
                return target
            log(f"bundled pack {name}: the cached copy in {target} does not match its digest; unpacking it again")
        if pack.members:
            _assemble(pack, slot, log)
        else:
            _unpack(pack, slot, log)
    return target


def _unpack(pack: BundledPack, slot: Path, log: Callable[[str], None]) -> None:
    archive = _tasks_dir() / pack.archive
    if not archive.is_file():
        raise UserError(f"{archive}: the bundled pack's archive is missing; reinstall the package")
    if file_sha256(archive) != pack.archive_sha256:
        raise UserError(f"{archive}: does not match its sha256 in {MANIFEST}; reinstall the package")
    start = time.monotonic()
    log(f"bundled pack {pack.name}: unpacking {pack.tasks} tasks into {slot / pack.name} (first use)")
    tmp = Path(tempfile.mkdtemp(prefix=f".{pack.name}.unpacking-", dir=slot))
    try:
        with heartbeat(10, lambda s: log(f"bundled pack {pack.name}: still unpacking ({s:.0f} s)")):
            extract_archive(archive, tmp)
            found = tree_sha256(tmp)
        if found != pack.tree_sha256:
            raise UserError(f"{archive}: unpacks to tree digest {found[:16]}, the manifest says "
                            f"{pack.tree_sha256[:16]}; reinstall the package")
        _install(tmp, slot, pack)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    log(f"bundled pack {pack.name}: ready in {time.monotonic() - start:.1f} s")


def _install(tmp: Path, slot: Path, pack: BundledPack) -> None:
    """Rename a checked folder into place (a damaged copy under the final name is moved away first)."""
    target = slot / pack.name
    (slot / _STAMP).unlink(missing_ok=True)
    if target.exists():
        old = slot / f".{pack.name}.damaged-{os.getpid()}"
        target.rename(old)
        shutil.rmtree(old, ignore_errors=True)
    tmp.rename(target)
    _write_stamp(slot, pack)


def assemble_composite(members: tuple[tuple[str, tuple[str, ...]], ...], source: Path, dest: Path,
                       member_dir: Callable[[str], Path]) -> None:
    """A composite pack's folder: its member packs' task folders (hard links where the file system
    allows, copies otherwise) and the file it was selected by (`source`, e.g. benchmark.json)."""
    dest.mkdir(parents=True, exist_ok=True)
    for name, ids in members:
        root = member_dir(name)
        for task_id in ids:
            if not (root / task_id).is_dir():
                raise UserError(f"composite pack: task {task_id} is missing from pack {name} ({root})")
            shutil.copytree(root / task_id, dest / task_id, copy_function=_link_or_copy,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copyfile(source, dest / source.name)


def _link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def _assemble(pack: BundledPack, slot: Path, log: Callable[[str], None]) -> None:
    source = _tasks_dir() / pack.source
    if not source.is_file() or file_sha256(source) != pack.source_sha256:
        raise UserError(f"{source}: missing or not the file recorded in {MANIFEST}; reinstall the package")
    log(f"bundled pack {pack.name}: assembling {pack.tasks} tasks from {', '.join(m for m, _ in pack.members)}")
    tmp = Path(tempfile.mkdtemp(prefix=f".{pack.name}.assembling-", dir=slot))
    try:
        assemble_composite(pack.members, source, tmp, lambda m: pack_dir(m, log))
        found = tree_sha256(tmp)
        if found != pack.tree_sha256:
            raise UserError(f"bundled pack {pack.name}: assembles to tree digest {found[:16]}, the manifest says "
                            f"{pack.tree_sha256[:16]}; rebuild it with `testhelix pack construct`")
        _install(tmp, slot, pack)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def extract_archive(archive: Path, dest: Path) -> None:
    """Unpack one of our own archives: plain files and folders only, every path inside `dest`."""
    with tarfile.open(archive, mode="r:xz") as tar:
        for member in tar:
            rel = PurePosixPath(member.name)
            if rel.is_absolute() or ".." in rel.parts or not rel.parts:
                raise UserError(f"{archive}: entry {member.name!r} points outside the pack")
            out = dest.joinpath(*rel.parts)
            if member.isdir():
                out.mkdir(parents=True, exist_ok=True)
                continue
            src = tar.extractfile(member) if member.isfile() else None  # None for links and devices
            if src is None:
                raise UserError(f"{archive}: entry {member.name!r} is not a plain file or folder")
            out.parent.mkdir(parents=True, exist_ok=True)
            with src, open(out, "wb") as fh:
                shutil.copyfileobj(src, fh)
            os.chmod(out, 0o755 if member.mode & 0o111 else 0o644)


Kind = Literal["pack", "split file", "strategy"]


def bundled_names(kind: Kind) -> list[str]:
    """The names `resolve` accepts for one kind of input."""
    if kind == "pack":
        return list(bundled_packs())
    folder = splits_dir() if kind == "split file" else strategies_dir()
    return sorted(p.stem for p in folder.glob("*.json") if p.name != "schema.json")


def bundled_pack(name: str, log: Callable[[str], None] = lambda s: None) -> Path:
    """The folder of a bundled pack (unpacked into the user cache on first use)."""
    return pack_dir(name, log)


@dataclass(frozen=True)
class Resolved:
    path: Path
    bundled: bool
    note: str | None    # the line saying which was used, when a bundled name is involved


def resolve(value: str | Path, kind: Kind, log: Callable[[str], None] = lambda s: None) -> Resolved | None:
    """`value` as a path if one exists there, else as a bundled name; None if it is neither.
    `log` receives progress lines (unpacking a pack on first use)."""
    path = Path(value)
    text = str(value)
    names = bundled_names(kind) if "/" not in text and text not in ("", ".", "..") else []
    if path.exists():
        note = (f"{kind} {text!r}: using the path ./{text}, not the bundled {kind} of that name "
                f"(a path wins over a name)") if text in names else None
        return Resolved(path, False, note)
    if text not in names:
        return None
    if kind == "pack":
        found = bundled_pack(text, log)
    elif kind == "split file":
        found = splits_dir() / f"{text}.json"
    else:
        found = strategies_dir() / f"{text}.json"
    return Resolved(found, True, f"{kind} {text!r}: using the bundled {kind} ({found})")


def recorded_pack(path: str | Path, log: Callable[[str], None] = lambda s: None) -> Path:
    """A pack folder recorded in a run (resume): as recorded, or, when it was the cached copy of a
    bundled pack that has since been removed, that pack unpacked again (same digest, same tasks)."""
    path = Path(path)
    if path.is_dir():
        return path
    for pack in bundled_packs().values():
        if path.name == pack.name and path.parent.name == cache_slot(pack).name:
            return bundled_pack(pack.name, log)
    return path
