"""Fresh per-execution workspaces, built cheaply from a content-addressed cache of trees.

Layout of the staging folder (private to one executor, deleted on close):

    trees/<sha256>/    a read-only copy of a program or suite tree, made once per digest, with
                       the byte-code the fork server compiled for it (precompile.py)
    ws/<name>/         one workspace: the program tree at its root, the suite in suite/, .home/

With the namespaced sandbox the test runs under a uid that owns neither the cached files nor their
folders, so a workspace can hard-link the cached files (no copy per execution): the test may
replace a link in its own workspace but cannot change the shared inode. With the plain fallback
the test runs as the cache's owner, so files are copied.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Callable

from testhelix.digest import tree_files

SUITE_SUBDIR = "suite"
HOME_SUBDIR = ".home"
ENTRY_SCRIPT = "run_tests.sh"


def _copy_tree_readonly(src: Path, dest: Path, prepare: Callable[[Path], object] | None = None) -> None:
    """Copy the files a tree digest covers (caches excluded), `prepare` the copy, make it read-only."""
    tmp = dest.with_name(dest.name + f".tmp{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for rel in tree_files(src):
        target = tmp / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src / rel, target)
        os.chmod(target, 0o555 if os.access(src / rel, os.X_OK) else 0o444)
    if prepare is not None:
        prepare(tmp)
    for d, _, files in os.walk(tmp):
        os.chmod(d, 0o555)
        for name in files:
            os.chmod(os.path.join(d, name), os.stat(os.path.join(d, name)).st_mode & 0o555)
    try:
        os.rename(tmp, dest)  # atomic: another server may have cached the same digest meanwhile
    except OSError:
        force_rmtree(tmp)


def force_rmtree(path: Path) -> None:
    def onerror(func, p, _exc):  # read-only folders: make writable, retry once
        try:
            os.chmod(os.path.dirname(p), 0o755)
            os.chmod(p, 0o755)
            func(p)
        except OSError:
            pass

    shutil.rmtree(path, onerror=onerror)


class TreeCache:
    """`prepare` runs once on each new copy before it becomes read-only (the fork server compiles it)."""

    def __init__(self, staging: Path, prepare: Callable[[Path], object] | None = None):
        self.root = staging / "trees"
        self.root.mkdir(parents=True, exist_ok=True)
        self.prepare = prepare
        self._listings: dict[Path, tuple[tuple[str, ...], tuple[str, ...]]] = {}

    def get(self, src: Path, digest: str) -> Path:
        cached = self.root / digest
        if not cached.is_dir():
            _copy_tree_readonly(src, cached, self.prepare)
        return cached

    def listing(self, cached: Path) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(folders, files) of a cached tree, relative, parents first; read once per tree."""
        if cached not in self._listings:
            folders, files = [], []
            for d, _dirs, names in os.walk(cached):
                rel = os.path.relpath(d, cached)
                folders.append(rel)
                files += [os.path.normpath(os.path.join(rel, n)) for n in names]
            self._listings[cached] = (tuple(folders), tuple(files))
        return self._listings[cached]


def _populate(cached: Path, dest: Path, link: bool, owner: int | None, skip: Callable[[str], bool]) -> None:
    for dirpath, dirnames, filenames in os.walk(cached):
        rel = os.path.relpath(dirpath, cached)
        out = dest if rel == "." else dest / rel
        out.mkdir(exist_ok=True)
        if owner is not None:
            os.chown(out, owner, owner)
        for name in filenames:
            if skip(name):
                continue
            if link:
                os.link(os.path.join(dirpath, name), out / name)
            else:
                shutil.copy2(os.path.join(dirpath, name), out / name)
                os.chmod(out / name, 0o644)


def build_workspace(ws: Path, program: Path, suite: Path, link: bool, owner: int | None,
                    skip: Callable[[str], bool] = lambda name: False) -> None:
    """A fresh workspace: program tree at the root, suite in suite/, an empty home folder.

    `skip(file name)`: cached files to leave out of this workspace.
    """
    ws.mkdir(parents=True)
    if owner is not None:
        os.chown(ws, owner, owner)
    _populate(program, ws, link, owner, skip)
    suite_dir = ws / SUITE_SUBDIR
    if suite_dir.exists():  # a program that ships its own suite/ folder: the submitted suite wins
        force_rmtree(suite_dir)
    _populate(suite, suite_dir, link, owner, skip)
    home = ws / HOME_SUBDIR
    home.mkdir(exist_ok=True)
    if owner is not None:
        os.chown(home, owner, owner)


def remove_workspace(ws: Path) -> None:
    force_rmtree(ws)


def program_packages(program: Path) -> set[str]:
    """Top-level import names a program tree provides (packages and modules at its root)."""
    names = set()
    for entry in program.iterdir():
        if entry.is_dir() and entry.name.isidentifier():
            names.add(entry.name)
        elif entry.suffix == ".py" and entry.stem.isidentifier():
            names.add(entry.stem)
    return names
