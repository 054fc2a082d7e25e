"""Staging folders that outlive a killed process are reclaimed at the next start.

A process that creates a staging folder calls `claim(folder)`: it opens `<folder>/.owner.lock` and
holds an exclusive `flock` on it for as long as it lives (the kernel drops the lock when the
process dies, however it dies, so no PID can be reused by mistake). `reclaim_dead(parent, prefix)`
removes only folders that carry such a lock file and whose lock can be taken, i.e. whose owner is
gone; a folder without the lock file (not ours, or made by an older version) is never touched, so
this is never a broad name match.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import tempfile
from pathlib import Path

LOCK_NAME = ".owner.lock"
_held: dict[str, int] = {}  # folder -> the descriptor holding its lock (kept open while we live)


def claim(folder: Path) -> None:
    """Mark `folder` as owned by this process until it exits (or `release` is called)."""
    fd = os.open(Path(folder) / LOCK_NAME, os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    os.write(fd, f"{os.getpid()}\n".encode())
    _held[str(folder)] = fd


def release(folder: Path) -> None:
    fd = _held.pop(str(folder), None)
    if fd is not None:
        os.close(fd)


def reclaim_dead(parent: Path | None = None, prefix: str = "testhelix-prism-") -> list[Path]:
    """Remove staging folders under `parent` (default: the temp folder) whose owner has died."""
    parent = Path(parent or tempfile.gettempdir())
    removed: list[Path] = []
    try:
        candidates = [p for p in parent.iterdir() if p.name.startswith(prefix)]
    except OSError:
        return removed
    for folder in candidates:
        if str(folder) in _held or not (folder / LOCK_NAME).is_file():
            continue
        try:
            fd = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)  # the owner is alive
            continue
        try:
            shutil.rmtree(folder, ignore_errors=True)
        finally:
            os.close(fd)
        if not folder.exists():
            removed.append(folder)
    return removed


def make_staging(prefix: str = "testhelix-prism-", parent: Path | None = None) -> Path:
    """A new staging folder owned by this process, after reclaiming those of dead processes."""
    reclaim_dead(parent, prefix)
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    claim(folder)
    return folder
