"""Writing the bundled packs' archive and manifest (`testhelix pack bundle`, after `testhelix pack build`).

Reading them, unpacking into the user cache and the manifest format: testhelix/core/bundled_data.py.
"""

from __future__ import annotations

import io
import json
import lzma
import os
import tarfile
import tomllib
from pathlib import Path
from typing import Any

from testhelix.core.atomic import atomic_path, write_text
from testhelix.core.bundled_data import MANIFEST, BundledPack
from testhelix.core.digest import file_sha256, tree_files, tree_sha256
from testhelix.tasks.splits import scan_pack

_XZ_PRESET = 9 | lzma.PRESET_EXTREME


def write_archive(pack: Path, out: Path) -> None:
    """A byte-identical archive for identical trees: sorted entries, no times, owners or umask."""

    pack = Path(pack)
    files = tree_files(pack)
    folders = sorted({parent for rel in files for parent in rel.parents if parent != Path(".")},
                     key=lambda p: p.as_posix())
    entries = sorted([(p, True) for p in folders] + [(p, False) for p in files], key=lambda e: e[0].as_posix())
    with atomic_path(Path(out)) as tmp:
        with lzma.open(tmp, "wb", format=lzma.FORMAT_XZ, preset=_XZ_PRESET) as xz, \
                tarfile.open(fileobj=xz, mode="w", format=tarfile.GNU_FORMAT) as tar:
            for rel, is_dir in entries:
                info = tarfile.TarInfo(rel.as_posix())
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                info.mtime = 0
                if is_dir:
                    info.type, info.mode = tarfile.DIRTYPE, 0o755
                    tar.addfile(info)
                    continue
                data = (pack / rel).read_bytes()
                info.size = len(data)
                info.mode = 0o755 if (pack / rel).stat().st_mode & 0o111 else 0o644
                tar.addfile(info, io.BytesIO(data))
        os.chmod(tmp, 0o644)  # a file the package ships, not a private temporary one


def write_manifest(name: str, pack: Path, archive: Path, source: Path, seed: int) -> BundledPack:
    """Record (or replace) `name` in the manifest beside `archive`."""

    tasks = scan_pack(pack)
    contexts: dict[str, int] = {}
    for toml in sorted(Path(pack).glob("*/task.toml")):
        context = str(tomllib.loads(toml.read_text()).get("metadata", {}).get("context", "?"))
        contexts[context] = contexts.get(context, 0) + 1
    entry = BundledPack(name, archive.name, file_sha256(archive), tree_sha256(pack), tuple(sorted(t.id for t in tasks)),
                        dict(sorted(contexts.items())), Path(source).name,
                        tree_sha256(source) if Path(source).is_dir() else file_sha256(source), seed)
    path = archive.parent / MANIFEST
    doc: dict[str, Any] = json.loads(path.read_text()) if path.is_file() else {"format": 1, "packs": {}}  # JSON
    doc["packs"][name] = entry.to_json()
    write_text(path, json.dumps(doc, indent=2, sort_keys=True) + "\n")
    os.chmod(path, 0o644)
    return entry
