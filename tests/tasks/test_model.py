"""The task.toml / manifest model: one owner that reads and writes both files."""

from __future__ import annotations

import pytest

from testhelix.core.bundled_data import bundled_pack
from testhelix.core.errors import UserError
from testhelix.tasks.model import (
    Environment,
    Metadata,
    TaskToml,
    dump_manifest,
    dump_task_toml,
    parse_task_toml,
    read_manifest,
    read_task_toml,
    write_task_toml,
)


def test_bundled_pack_round_trips_byte_for_byte():
    tomls = sorted(bundled_pack("katas").glob("*/task.toml"))
    assert len(tomls) > 50
    for path in tomls:
        assert dump_task_toml(read_task_toml(path)) == path.read_text(), path
        manifest = path.parent / "panel" / "manifest.json"
        assert dump_manifest(read_manifest(manifest)) == manifest.read_text(), manifest


def test_extended_fields_and_unknown_keys_are_kept(tmp_path):
    doc = TaskToml(metadata=Metadata(id="t-1", source="harbor", category="programming", tags=["a"],
                                     upstream={"version": "1.0", "metadata.author": "x"}),
                   environment=Environment(packages=["pkg"], requirements=["attrs==23.2.0"], cpus=2, memory_mb=512))
    write_task_toml(tmp_path / "task.toml", doc)
    assert read_task_toml(tmp_path / "task.toml") == doc
    text = (tmp_path / "task.toml").read_text() + '\n[extra]\nnote = "kept"\n'
    again = parse_task_toml(text, "t")
    assert "[extra]" in dump_task_toml(again) and (again.metadata.upstream or {})["metadata.author"] == "x"


@pytest.mark.parametrize("text,match", [
    ('[metadata]\nid = "../x"\n', "metadata.id"),
    ('[metadata]\nid = "a"\ncontext = "space"\n', "metadata.context"),
    ('[metadata]\nid = "a"\n[verifier]\ntimeout_sec = true\n', "verifier.timeout_sec"),
    ('[metadata]\nid = "a"\n[environment]\npackages = "x"\n', "environment.packages"),
    ("[metadata\n", "TOML does not parse"),
])
def test_bad_task_toml_names_the_field(text, match):
    with pytest.raises(UserError, match=match):
        parse_task_toml(text, "task.toml")
