"""Content digests of files and folder trees (programs, suites, panel artifacts).

A tree digest is sha256 over the sorted list of (relative POSIX path, sha256 of the bytes) of
every regular file below the folder, so it does not depend on timestamps, permissions or the
order in which the file system lists entries. Caches (`__pycache__`, `*.pyc`, `.pytest_cache`,
`.coverage*`) are left out: running a program must not change its digest.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from testhelix.core.errors import UserError

_IGNORED_DIRS = {"__pycache__", ".pytest_cache", ".mypy_cache", ".hypothesis"}


def _ignored(rel: Path) -> bool:
    if any(part in _IGNORED_DIRS for part in rel.parts):
        return True
    return rel.suffix == ".pyc" or rel.name.startswith(".coverage")


def file_sha256(path: Path) -> str:
    with open(path, "rb") as f:  # streamed: a large file is never held in memory
        return hashlib.file_digest(f, "sha256").hexdigest()


class NonUtf8Name(UserError):
    """A file name that is not valid UTF-8 (digests, caches and the sandbox need text names)."""


def check_name(path: Path) -> None:
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        shown = str(path).encode("utf-8", "backslashreplace").decode("ascii", "backslashreplace")
        raise NonUtf8Name(f"{shown}: file name is not valid UTF-8 (rename the file)") from None


def tree_files(root: Path) -> list[Path]:
    """Relative paths of the files a tree digest covers, sorted. Raises `NonUtf8Name`."""
    root = Path(root)
    out = []
    stack = [root]  # iterative: any depth (a recursive walk overflowed on deep nests)
    while stack:
        folder = stack.pop()
        for entry in os.scandir(folder):
            p = Path(entry.path)
            check_name(p)
            if entry.is_symlink():
                continue
            if entry.is_dir():
                stack.append(p)
            elif entry.is_file():
                rel = p.relative_to(root)
                if not _ignored(rel):
                    out.append(rel)
    return sorted(out, key=lambda r: r.as_posix())


def tree_sha256(root: Path) -> str:
    root = Path(root)
    h = hashlib.sha256()
    for rel in tree_files(root):
        h.update(rel.as_posix().encode())
        h.update(b"\0")
        h.update(file_sha256(root / rel).encode())
        h.update(b"\n")
    return h.hexdigest()


def canonical_json(value: Any, *, ascii_only: bool = False) -> str:
    """One text per JSON value (sorted keys, no spaces): the input to every content hash.

    Two variants exist because stored hashes depend on them and must never change: strategy hashes
    and split digests are over the UTF-8 form (the default); GTDD's trace ids, manifests and audit
    records over the ASCII-escaped form, which also refuses NaN and infinities (`ascii_only=True`)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=ascii_only, allow_nan=not ascii_only)
