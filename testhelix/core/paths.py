"""Where the bundled data is.

In a source checkout (and an editable install) the data folders strategies/, skills/, splits/ and
tasks/ sit beside the packages at the top of the repository; a wheel carries them in
testhelix/_data (see pyproject.toml). The task packs themselves are shipped as archives and unpacked
into a user cache on first use (`testhelix/core/bundled_data.py`).

Commands accept a bundled name wherever they take a pack folder (`--pack katas`), a split file
(`--split-file katas`) or a strategy file (`--baseline initial`). A path that exists always wins
over a name; `resolve` says in one line which of the two was used whenever a bundled name is
involved, so an unexpected folder called `katas` in the working directory never goes unnoticed
(`testhelix/core/bundled_data.py`).
"""

from __future__ import annotations

from pathlib import Path

_PKG = Path(__file__).resolve().parents[1]  # the testhelix package (this file is testhelix/core/paths.py)


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
