"""Where the bundled data is, and the one place a command-line name turns into bundled data.

In a source checkout (and an editable install) the data folders strategies/, skills/, splits/ and
tasks/ sit beside the packages at the top of the repository; a wheel carries them in
testhelix/_data (see pyproject.toml). The task packs themselves are shipped as archives and unpacked
into a user cache on first use (`testhelix.pack.bundle`).

Commands accept a bundled name wherever they take a pack folder (`--pack katas`), a split file
(`--split-file katas`) or a strategy file (`--baseline initial`). A path that exists always wins
over a name; `resolve` says in one line which of the two was used whenever a bundled name is
involved, so an unexpected folder called `katas` in the working directory never goes unnoticed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

_PKG = Path(__file__).resolve().parent

Kind = Literal["pack", "split file", "strategy"]


def data_root() -> Path:
    installed = _PKG / "_data"
    if installed.is_dir():
        return installed
    return _PKG.parent


def is_installed() -> bool:
    """True in an installed wheel, False in a source checkout (editable or not)."""
    return (_PKG / "_data").is_dir()


def strategies_dir() -> Path:
    return data_root() / "strategies"


def skills_dir() -> Path:
    return data_root() / "skills"


def splits_dir() -> Path:
    return data_root() / "splits"


def tasks_dir() -> Path:
    return data_root() / "tasks"


def bundled_names(kind: Kind) -> list[str]:
    """The names `resolve` accepts for one kind of input."""
    if kind == "pack":
        from testhelix.pack.bundle import bundled_packs

        return list(bundled_packs())
    folder = splits_dir() if kind == "split file" else strategies_dir()
    return sorted(p.stem for p in folder.glob("*.json") if p.name != "schema.json")


def bundled_pack(name: str, log: Callable[[str], None] = lambda s: None) -> Path:
    """The folder of a bundled pack (unpacked into the user cache on first use)."""
    from testhelix.pack.bundle import pack_dir

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
    from testhelix.pack.bundle import bundled_packs, cache_slot

    for pack in bundled_packs().values():
        if path.name == pack.name and path.parent.name == cache_slot(pack).name:
            return bundled_pack(pack.name, log)
    return path
