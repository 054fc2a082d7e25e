"""Candidate commitment: the coder's workspace, protected files, and the canonical manifest hash.

After each coding session the harness (docs/design.md §8) records attempted changes to protected
files, restores them, and hashes a canonical manifest of everything the candidate can read and run
together with its execution configuration. File additions and deletions change the manifest, so
they change the hash. Every later step of the round runs against that snapshot; `verify` tells
whether the workspace still matches it (a change after commitment invalidates the round).

The reference implementation and the private records never live in the workspace.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from testhelix.core.digest import canonical_json

SPEC_FILE = "SPEC.md"
PUBLIC_TESTS_FILE = "tests/public_examples.json"


@dataclass(frozen=True)
class ProtectedChange:
    path: str
    change: str  # "modified" or "deleted"


@dataclass(frozen=True)
class Commitment:
    round: int
    manifest_hash: str
    module_source: str
    files: tuple[tuple[str, str], ...]  # (relative path, sha256 or "symlink:<target>")
    protected_changes: tuple[ProtectedChange, ...] = field(default=())

    def to_json(self) -> dict:
        return {"round": self.round, "manifest_hash": self.manifest_hash,
                "files": [list(f) for f in self.files],
                "protected_changes": [c.__dict__ for c in self.protected_changes]}


def manifest_entries(root: Path) -> tuple[tuple[str, str], ...]:
    """Every file and symlink below root, sorted by path, with a content digest.

    Written by hand rather than with testhelix.core.digest.tree_files because that helper leaves out
    caches and symlinks, and here everything a candidate could read must count."""
    entries = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in sorted(filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]):
            path = Path(dirpath) / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                entries.append((rel, f"symlink:{os.readlink(path)}"))
            else:
                entries.append((rel, hashlib.sha256(path.read_bytes()).hexdigest()))
    return tuple(sorted(entries))


def manifest_hash(entries: tuple[tuple[str, str], ...], config: Mapping) -> str:
    body = canonical_json({"files": [list(e) for e in entries], "config": dict(config)}, ascii_only=True)
    return hashlib.sha256(body.encode()).hexdigest()


class Workspace:
    """The coder's repository: its module plus protected files (spec, public tests)."""

    def __init__(self, root: Path, module_name: str, protected: Mapping[str, str]):
        self.root = Path(root)
        self.module_name = module_name
        self.protected = dict(protected)  # relative path -> the text it must keep

    @classmethod
    def create(cls, root: Path, module_name: str, spec: str, public_tests_json: str,
               module_source: str) -> Workspace:
        ws = cls(root, module_name, {SPEC_FILE: spec, PUBLIC_TESTS_FILE: public_tests_json})
        ws.root.mkdir(parents=True, exist_ok=True)
        for old in list(_all_files(ws.root)):
            (ws.root / old).unlink()  # a resumed trajectory rebuilds its workspace from the record
        for rel, text in ws.protected.items():
            ws._write(rel, text)
        ws.write_module(module_source)
        return ws

    def _write(self, rel: str, text: str) -> None:
        path = self.root / rel
        if path.is_symlink():
            path.unlink()
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    def write_module(self, source: str) -> None:
        self._write(self.module_name, source)

    def read_module(self) -> str:
        path = self.root / self.module_name
        return path.read_text(errors="replace") if path.is_file() else ""

    def apply_edits(self, edits: Mapping[str, str | None]) -> None:
        """File edits a coding session made besides its module (None deletes the file)."""
        for rel, text in edits.items():
            path = (self.root / rel).resolve()
            if not path.is_relative_to(self.root.resolve()):
                continue  # a path outside the workspace is not the coder's to touch
            if text is None:
                if path.is_file():
                    path.unlink()
            else:
                self._write(rel, text)

    def restore_protected(self) -> tuple[ProtectedChange, ...]:
        changes = []
        for rel, text in sorted(self.protected.items()):
            path = self.root / rel
            if not path.exists() or path.is_symlink():
                changes.append(ProtectedChange(rel, "deleted" if not path.is_symlink() else "modified"))
                self._write(rel, text)
            elif path.read_text(errors="replace") != text:
                changes.append(ProtectedChange(rel, "modified"))
                self._write(rel, text)
        return tuple(changes)

    def commit(self, round_index: int, config: Mapping) -> Commitment:
        changes = self.restore_protected()
        entries = manifest_entries(self.root)
        return Commitment(round_index, manifest_hash(entries, config), self.read_module(), entries,
                          changes)

    def verify(self, commitment: Commitment, config: Mapping) -> bool:
        return manifest_hash(manifest_entries(self.root), config) == commitment.manifest_hash


def _all_files(root: Path) -> Iterator[Path]:
    for dirpath, _, filenames in os.walk(root):
        for name in filenames:
            yield (Path(dirpath) / name).relative_to(root)
