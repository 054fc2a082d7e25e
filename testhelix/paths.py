"""Where the bundled data folders are: strategies/, skills/, splits/, tasks/.

In a source checkout (and an editable install) they sit beside the packages at the top of the
repository; a wheel carries them in testhelix/_data (see pyproject.toml).
"""

from __future__ import annotations

from pathlib import Path

_PKG = Path(__file__).resolve().parent


def data_root() -> Path:
    installed = _PKG / "_data"
    if installed.is_dir():
        return installed
    return _PKG.parent


def strategies_dir() -> Path:
    return data_root() / "strategies"


def skills_dir() -> Path:
    return data_root() / "skills"


def splits_dir() -> Path:
    return data_root() / "splits"


def tasks_dir() -> Path:
    return data_root() / "tasks"
