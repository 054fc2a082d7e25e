"""Atomic file output: write to a temporary file in the target's folder, then rename.

A reader (or a retry after a crash or a full disk) sees either the old file, no file, or the
complete new one, never a partial file. `exclusive=True` refuses to replace an existing file
(frozen strategies are never overwritten) without a window in which two writers both succeed.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from testhelix.errors import UserError, describe_os_error


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
        # file the user asked for, in one line (testhelix/errors.py).
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
