"""A bundled model whose weights come in chunk packages (local:gemma3-270m) is joined once into the
cache, checked against the published SHA-256, and never left half-written; here on small fake
packages (the real ones come with the `local` extra)."""

from __future__ import annotations

import hashlib
import sys

import pytest

from testhelix.core.errors import UserError
from testhelix.llm import local_weights
from testhelix.llm.local_weights import Bundled, bundled_path


@pytest.fixture()
def fake_chunks(tmp_path, monkeypatch):
    chunks = [b"GGUF" + bytes(range(200)) * 3, b"middle" * 50, b"end"]
    for i, data in enumerate(chunks):
        folder = tmp_path / "site" / f"fakemodel_part{i + 1}" / "data"
        folder.mkdir(parents=True)
        (folder.parent / "__init__.py").write_text("")
        (folder / f"m.gguf.part{i:02d}").write_bytes(data)
    sums = tmp_path / "site" / "fakemodel" / "data"
    sums.mkdir(parents=True)
    (sums.parent / "__init__.py").write_text("")
    (sums / "SHA256SUMS").write_text(f"{hashlib.sha256(b''.join(chunks)).hexdigest()}  m.gguf\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setenv("TESTHELIX_CACHE_DIR", str(tmp_path / "cache"))
    entry = Bundled("m.gguf", tuple((f"fakemodel_part{i + 1}", f"data/m.gguf.part{i:02d}") for i in range(3)),
                    sha256_from=("fakemodel", "data/SHA256SUMS"))
    monkeypatch.setitem(local_weights.BUNDLED, "fake", entry)
    yield b"".join(chunks), sums / "SHA256SUMS"
    for name in [m for m in sys.modules if m.startswith("fakemodel")]:
        del sys.modules[name]


def test_chunks_are_joined_once_into_the_cache_and_checked(fake_chunks, tmp_path, capsys):
    whole, _ = fake_chunks
    path = bundled_path("fake")
    assert path == tmp_path / "cache" / "models" / "m.gguf" and path.read_bytes() == whole
    assert "joining its 3 weight chunks" in capsys.readouterr().err      # a slow first step says what it does
    assert bundled_path("fake") == path and capsys.readouterr().err == ""  # the second use finds it


def test_a_hash_mismatch_is_refused_and_leaves_nothing(fake_chunks, tmp_path):
    _, sums = fake_chunks
    sums.write_text("0" * 64 + "  m.gguf\n")
    with pytest.raises(UserError, match="do not match the published SHA-256"):
        bundled_path("fake")
    assert not (tmp_path / "cache" / "models" / "m.gguf").exists()
    assert list((tmp_path / "cache" / "models").iterdir()) == []


def test_a_missing_chunk_package_names_the_extra(monkeypatch):
    monkeypatch.setitem(local_weights.BUNDLED, "absent", Bundled("a.gguf", (("no_such_package_x", "a"),)))
    with pytest.raises(UserError, match="no-such-package-x.*local` extra"):
        bundled_path("absent")
