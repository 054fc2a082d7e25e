"""Front matter that is valid YAML but not a mapping is a clear user error, not an AttributeError."""

import pytest

from testhelix.core.errors import UserError
from testhelix.strategy.skills import load_library


@pytest.mark.parametrize("front", ["- name: listed\n- description: a list", "just a sentence", "42"])
def test_front_matter_that_is_not_a_mapping(tmp_path, front):
    path = tmp_path / "odd" / "SKILL.md"
    path.parent.mkdir()
    path.write_text(f"---\n{front}\n---\n" + "line\n" * 40)
    with pytest.raises(UserError, match="front matter must be a mapping"):
        load_library(tmp_path)
