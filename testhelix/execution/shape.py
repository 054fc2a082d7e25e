"""The host's check of a submitted suite's shape, before anything hashes, copies or compiles it.

A suite is untrusted input to the harness itself, not only to the sandbox: 1,100 nested folders
overflowed a recursive walk, a 1 GiB sparse file (8 KB on disk) was read into memory to be hashed
and copied onto the host's disk, a file name that is not UTF-8 stopped a whole split run. So the
first thing done with a suite folder is one iterative walk (`lstat` only, never following a
symlink, never reading a file) against `SuiteShape`; a violation is a clear reason, and the caller
makes it an `error` outcome of that one task (see testhelix/prism/evaluation.py and the executor).
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

MB = 1 << 20


@dataclass(frozen=True)
class SuiteShape:
    max_depth: int = 32  # folders below the suite's root
    max_entries: int = 5000  # files, folders and links together
    max_file_mb: int = 16  # per file, apparent size (what a reader sees) and on disk
    max_total_mb: int = 64  # all files together, both measures


DEFAULT_SHAPE = SuiteShape()


def suite_problem(root: Path, shape: SuiteShape = DEFAULT_SHAPE) -> str | None:
    """Why `root` is not an acceptable suite folder, or None. Never raises for a folder's content."""
    entries, apparent, on_disk = 0, 0, 0
    stack: list[tuple[str, int]] = [(os.fspath(root), 0)]
    while stack:
        folder, depth = stack.pop()
        try:
            listing = list(os.scandir(folder))
        except OSError as exc:
            return f"{_shown(folder, root)}: cannot be listed ({exc.strerror})"
        for entry in listing:
            entries += 1
            if entries > shape.max_entries:
                return f"more than {shape.max_entries} files and folders"
            rel = _shown(entry.path, root)
            try:
                os.fsencode(entry.name).decode("utf-8")
            except UnicodeDecodeError:
                return f"{rel}: file name is not valid UTF-8"
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError as exc:
                return f"{rel}: cannot be read ({exc.strerror})"
            if stat.S_ISDIR(st.st_mode):
                if depth + 1 > shape.max_depth:
                    return f"{rel}: folders nested deeper than {shape.max_depth}"
                stack.append((entry.path, depth + 1))
            elif stat.S_ISREG(st.st_mode):
                disk = st.st_blocks * 512
                if max(st.st_size, disk) > shape.max_file_mb * MB:
                    return (f"{rel}: {st.st_size} bytes ({disk} on disk), over the {shape.max_file_mb} MB "
                            "limit per file")
                apparent, on_disk = apparent + st.st_size, on_disk + disk
                if max(apparent, on_disk) > shape.max_total_mb * MB:
                    return f"files over {shape.max_total_mb} MB in total"
            elif not stat.S_ISLNK(st.st_mode):
                return f"{rel}: not a regular file, folder or symlink"
    return None


def _shown(path: str, root: Path) -> str:
    return os.path.relpath(path, root).encode("utf-8", "backslashreplace").decode("utf-8")
