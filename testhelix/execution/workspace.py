"""Fresh per-execution workspaces, built cheaply from a content-addressed cache of trees.

Layout of the staging folder (private to one executor, deleted on close):

    trees/<sha256>/    a read-only copy of a program or suite tree, made once per digest by the
                       executor (host side), with byte-code compiled by a helper process
                       (precompile.py); servers find trees by digest and learn nothing else
    server<i>/ws/j<n>/ linked mode only: one workspace (program at the root, suite in suite/,
                       .home/), a size-capped tmpfs of its own with the namespaced sandbox

Overlay mode (the default, overlay.py) builds nothing. In linked mode with the namespaced sandbox
the workspace is a copy in a per-job tmpfs (hard links cannot cross into it), so a job never writes
to the host's disk; with the plain fallback it is a copy on disk. `force_rmtree` removes any tree
iteratively, never following a symlink and never raising.
"""

from __future__ import annotations

import os
import secrets
import shutil
import stat
import threading
from collections.abc import Callable
from pathlib import Path

from testhelix.core.digest import tree_files

INSIDE_WORKSPACE = "/workspace"  # where the namespaced sandbox shows a job's workspace
SUITE_SUBDIR = "suite"
HOME_SUBDIR = ".home"
ENTRY_SCRIPT = "run_tests.sh"


def _copy_tree(src: Path, tmp: Path) -> None:
    """Copy the files a tree digest covers (caches excluded) into the fresh folder `tmp`."""
    force_rmtree(tmp)
    tmp.mkdir(parents=True)
    for rel in tree_files(src):
        target = tmp / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src / rel, target)
        os.chmod(target, 0o555 if os.access(src / rel, os.X_OK) else 0o444)


FIXED_MTIME = 946684800  # 2000-01-01: every cached file and folder, so no timestamp follows copy order


def _seal(tmp: Path, dest: Path) -> None:
    """Make a prepared copy read-only, with one fixed timestamp, and move it to its digest name."""
    for d, _, files in os.walk(tmp, topdown=False):
        for name in files:
            path = os.path.join(d, name)
            os.chmod(path, os.stat(path).st_mode & 0o555)
            os.utime(path, (FIXED_MTIME, FIXED_MTIME))
        os.chmod(d, 0o555)
        os.utime(d, (FIXED_MTIME, FIXED_MTIME))
    try:
        os.rename(tmp, dest)  # atomic: another thread may have cached the same digest meanwhile
    except OSError:
        force_rmtree(tmp)


def force_rmtree(path: Path | str) -> None:
    """Delete a tree: iterative (any depth), never follows a symlink, never raises.

    One directory descriptor is open at a time (descending by name, climbing back through ".."),
    so neither the recursion limit, PATH_MAX nor the descriptor limit stops it. What cannot be
    removed stays, silently.
    """
    path = os.fspath(path)
    try:
        if not stat.S_ISDIR(os.lstat(path).st_mode):
            os.unlink(path)
            return
        fd = os.open(path, _DIR_FLAGS)
    except OSError:
        return
    names: list[str] = []  # the way down from `path`
    stuck: set[tuple[int, int]] = set()  # folders that could not be entered or removed
    while True:
        _try(os.fchmod, fd, 0o700)
        child = None
        try:
            entries = list(os.scandir(fd))
        except OSError:
            entries = []
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
                if stat.S_ISDIR(st.st_mode):
                    if (st.st_dev, st.st_ino) not in stuck:
                        child = entry.name
                        break
                else:
                    os.unlink(entry.name, dir_fd=fd)
            except OSError:
                continue
        if child is not None:
            try:
                sub = os.open(child, _DIR_FLAGS, dir_fd=fd)
            except OSError:
                _mark(stuck, fd, child)
                continue
            os.close(fd)
            fd, names = sub, names + [child]
            continue
        if not names:
            os.close(fd)
            _try(os.rmdir, path)
            return
        try:
            parent = os.open("..", _DIR_FLAGS, dir_fd=fd)
        except OSError:
            os.close(fd)
            return
        os.close(fd)
        fd, name = parent, names.pop()
        try:
            os.rmdir(name, dir_fd=fd)
        except OSError:
            _mark(stuck, fd, name)


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _mark(stuck: set[tuple[int, int]], dir_fd: int, name: str) -> None:
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        stuck.add((st.st_dev, st.st_ino))
    except OSError:
        pass


def _try(func: Callable[..., object], *args: object) -> None:
    try:
        func(*args)
    except OSError:
        pass


class TreeCache:
    """Read-only copies of trees, named by their digest, compiled once (precompile.py).

    Lives on the host side (the executor): the fork servers are given digests only, and find the
    trees by those names. New trees are compiled in one short-lived helper process per batch, so
    no process that forks test processes ever parsed a tree.
    """

    def __init__(self, staging: Path, compile_trees: Callable[[list[tuple[Path, str]]], object] | None = None):
        self.root = staging / "trees"
        self.root.mkdir(parents=True, exist_ok=True)
        os.chmod(self.root, 0o711)  # the sandbox uid (plain fallback) must not list other trees
        self.compile_trees = compile_trees
        self._lock = threading.Lock()

    def path(self, digest: str) -> Path:
        return self.root / digest

    def ensure(self, trees: dict[str, Path], compile_new: bool = True, suites: frozenset[str] = frozenset()) -> None:
        """Cache every `{digest: source folder}` not cached yet (compiled unless `compile_new` is off;
        the digests in `suites` are compiled as seen in a job's suite/ folder, the others at its root)."""
        with self._lock:
            new = {d: src for d, src in trees.items() if not self.path(d).is_dir()}
            if not new:
                return
            # Copied in an order drawn at random, not the caller's (a panel's run order): inode
            # numbers and change times then say nothing about a program's position.
            digests = list(new)
            secrets.SystemRandom().shuffle(digests)
            tmps = {d: self.root / f".tmp-{secrets.token_hex(8)}" for d in digests}
            for d in digests:
                _copy_tree(new[d], tmps[d])
            if self.compile_trees is not None and compile_new:
                self.compile_trees([(tmp, f"{INSIDE_WORKSPACE}/{SUITE_SUBDIR}" if d in suites else INSIDE_WORKSPACE)
                                    for d, tmp in tmps.items()])
            for d, tmp in tmps.items():
                _seal(tmp, self.path(d))


def listing(cached: Path) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(folders, files) of a cached tree, relative, parents first."""
    folders, files = [], []
    for d, _dirs, names in os.walk(cached):
        rel = os.path.relpath(d, cached)
        folders.append(rel)
        files += [os.path.normpath(os.path.join(rel, n)) for n in names]
    return tuple(folders), tuple(files)


def _populate(cached: Path, dest: Path, link: bool, owner: int | None, skip: Callable[[str], bool]) -> None:
    for dirpath, _dirnames, filenames in os.walk(cached):
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
    ws.mkdir(parents=True, exist_ok=True)  # it may be a freshly mounted tmpfs
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


def tree_module_names(tree: Path, anywhere: bool = False) -> frozenset[str]:
    """Import names a tree can provide: packages and modules at its root, or (`anywhere`) the name
    of every folder and .py file in it."""
    names: set[str] = set()
    for _d, dirs, files in os.walk(tree) if anywhere else [next(os.walk(tree))]:
        names.update(n for n in dirs if n.isidentifier())
        names.update(n[:-3] for n in files if n.endswith(".py") and n[:-3].isidentifier())
    return frozenset(names)


def tree_bytes(tree: Path) -> int:
    return sum(os.lstat(os.path.join(d, n)).st_size for d, _, files in os.walk(tree) for n in files)
