"""Atomic file output: write to a temporary file in the target's folder, then rename.

A reader (or a retry after a crash or a full disk) sees either the old file, no file, or the
complete new one, never a partial file. `exclusive=True` refuses to replace an existing file
(frozen strategies are never overwritten) without a window in which two writers both succeed.
The file gets the permissions the umask gives any new file (not the temporary file's 0600).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from testhelix.core.errors import UserError, describe_os_error


def current_umask() -> int:
    """The process's umask, read without changing it where the system allows (Linux /proc); else
    set and restored at once."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@contextmanager
def atomic_path(path: Path, exclusive: bool = False, suffix: str = "") -> Iterator[Path]:
    """Yield a temporary path beside `path`; on success it becomes `path`, on failure it is removed.

    `suffix` keeps the extension for writers that choose a format by name (matplotlib, networkx)."""
    path = Path(path)
    if path.is_dir():
        raise UserError(f"{path}: is a folder; give a file name to write")
    if exclusive and path.exists():
        raise UserError(f"{path}: exists already; it is never overwritten")
    tmp: Path | None = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.tmp-", suffix=suffix or path.suffix)
        os.close(fd)
        tmp = Path(name)
        os.chmod(tmp, 0o666 & ~current_umask())   # mkstemp makes 0600; the result is an ordinary output file
        yield tmp
        if exclusive:
            try:
                os.link(tmp, path)
            except FileExistsError:
                raise UserError(f"{path}: exists already; it is never overwritten") from None
        else:
            os.replace(tmp, path)
    except OSError as err:
        # A write to the temporary file that fails (a full disk) carries no file name: name the
        # file the user asked for, in one line (testhelix/core/errors.py).
        raise describe_os_error(err, path) from None
    finally:
        if tmp is not None:
            tmp.unlink(missing_ok=True)


def write_text(path: Path, text: str, exclusive: bool = False) -> None:
    with atomic_path(path, exclusive) as tmp:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())


def write_bytes(path: Path, data: bytes, exclusive: bool = False) -> None:
    with atomic_path(path, exclusive) as tmp:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
