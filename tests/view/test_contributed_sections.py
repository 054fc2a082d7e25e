"""`testhelix view` draws the sections other packages contribute (testhelix/view/contributed.py)
without importing them: AutoSaddler's release gate comes through its entry point, and an object
that is not a section is refused in one line naming what it lacks."""

from __future__ import annotations

import pytest

from testhelix.core.errors import UserError
from testhelix.view.contributed import ViewSection, load_section, view_sections


def test_the_gate_section_comes_from_autosaddlers_entry_point():
    sections = view_sections()
    assert [type(s).__module__ for s in sections] == ["autosaddler.view_gate"]
    assert all(isinstance(s, ViewSection) for s in sections) and sections[0].nav == ("gate", "release gate")


def test_an_object_that_is_not_a_section_is_refused_naming_what_it_lacks():
    with pytest.raises(UserError, match=r"view section 'os:sep'.*lacks nav, present, models, render"):
        load_section("os:sep")
