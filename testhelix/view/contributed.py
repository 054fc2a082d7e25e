"""Parts of a run's page (`testhelix view`) that another package draws from its own records, as it
contributes its store schema: an object with the `ViewSection` members, declared as an entry point
of `testhelix.view_sections` (testhelix/core/plugins.py), e.g.

    [project.entry-points."testhelix.view_sections"]
    gate = "autosaddler.view_gate:SECTION"

TestHelix's view knows no caller: every installed section is loaded, once per process, in
entry-point name order, and shown when the run folder holds what it draws.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Protocol, runtime_checkable

from testhelix.core.errors import UserError
from testhelix.core.plugins import VIEW_SECTIONS_GROUP, entry_point_names, load_plugin, missing_members
from testhelix.store.runstore import RunStore
from testhelix.view.html import Markup


@runtime_checkable
class ViewSection(Protocol):
    nav: tuple[str, str]   # (the section's anchor id, the link's text)

    def present(self, store: RunStore) -> bool:
        """Does this run folder hold what the section draws?"""
        ...

    def models(self, store: RunStore) -> list[str]:
        """The models behind what it shows (the page says so when they are simulated)."""
        ...

    def render(self, store: RunStore, run_dir: Path) -> Markup: ...


def load_section(name: str) -> ViewSection:
    obj = load_plugin(name, group=VIEW_SECTIONS_GROUP, builtins={}, option="view section", what="view section")
    if not isinstance(obj, ViewSection):
        raise UserError(f"view section {name!r}: {obj!r} lacks {', '.join(missing_members(obj, ViewSection))} "
                        "(see testhelix/view/contributed.py)")
    return obj


@cache
def view_sections() -> tuple[ViewSection, ...]:
    """Every installed section, in entry-point name order (loaded once per process)."""
    return tuple(load_section(name) for name in entry_point_names(VIEW_SECTIONS_GROUP))
