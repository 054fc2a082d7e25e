"""Write an admitted task of `pack create` in the pack format (tasks/README.md): task.toml,
instruction.md, environment/ (the initial program), solution/, tests/, panel/ with a manifest that
records each candidate's generator, provenance, label and digest, and optionally a simulation bank
(bank/) whose tests are the verifier's checks and whose repairs are admitted outputs the panel did
not select (so a simulated model never sees a panel program)."""

from __future__ import annotations

import shutil
from pathlib import Path

from testhelix.core.digest import tree_sha256
from testhelix.pack import bank as banks
from testhelix.pack.create import Candidate, Panel, TaskSource
from testhelix.pack.instructions import AGENT_TIMEOUT_S, VERIFIER_TIMEOUT_S
from testhelix.tasks.model import (
    Agent,
    Artifact,
    CandidateEntry,
    Environment,
    Metadata,
    PanelManifest,
    TaskToml,
    Verifier,
    dump_task_toml,
    write_manifest,
)

_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache")
BANK_REPAIRS = 2


def instruction(src: TaskSource, report: str) -> str:
    modules = ", ".join(f"`{p}`" for p in src.packages)
    return (f"# {src.title}\n\n"
            f"The working folder holds a Python program (importable: {modules}). Its intended behaviour is "
            f"specified below, followed by a bug report from a user.\n\n"
            f"Write a pytest test suite (files named `test_*.py`) that reproduces the reported bug: it must FAIL "
            f"on the current program and PASS on any correct repair of it. A correct repair may be written "
            f"differently from what you expect, so test the specified public behaviour, not incidental details "
            f"of the current implementation. The tests run with the working folder on `PYTHONPATH`. Do not "
            f"change the program itself.\n\n## Specification\n\n{src.spec.strip()}\n\n## Bug report\n\n{report}")


def solve_sh(reference: Path) -> str:
    names = " ".join(sorted(p.name for p in reference.iterdir() if p.name != "__pycache__"))
    return ("#!/bin/sh\n# Copy the reference repair (solution/program) over the working program.\nset -eu\n"
            'here="$(cd "$(dirname "$0")" && pwd)"\ntarget="${1:-.}"\n'
            f"for name in {names}; do\n" '  rm -rf "$target/$name"\n  cp -R "$here/program/$name" "$target/$name"\n'
            "done\n")


def _copy(src: Path, dest: Path) -> str:
    shutil.copytree(src, dest, ignore=_IGNORE)
    return tree_sha256(dest)


def _entry(cand: Candidate, role: str, artifact: str, digest: str) -> CandidateEntry:
    return CandidateEntry(id=cand.id, label=cand.label or "invalid", role=role,  # type: ignore[arg-type,unused-ignore]
                          provenance=cand.provenance, artifact=artifact, sha256=digest,
                          generator=cand.generator, intent=cand.intent)


def write_task(src: TaskSource, panel: Panel, dest: Path, with_bank: bool, outputs: int, budget: int) -> None:
    dest.mkdir(parents=True)
    doc = TaskToml(metadata=Metadata(id=src.id, source=src.source, context=src.context, difficulty=src.difficulty,
                                     upstream=dict(src.upstream) or None),
                   agent=Agent(timeout_sec=AGENT_TIMEOUT_S), verifier=Verifier(timeout_sec=VERIFIER_TIMEOUT_S),
                   environment=Environment(python=">=3.11", packages=list(src.packages)))
    (dest / "task.toml").write_text(dump_task_toml(doc))
    (dest / "instruction.md").write_text(instruction(src, panel.report or ""))
    initial_dir = panel.initial.path if panel.initial is not None else src.initial
    assert initial_dir is not None
    initial_digest = _copy(initial_dir, dest / "environment")
    ref_digest = _copy(src.reference, dest / "solution" / "program")
    (dest / "solution" / "solve.sh").write_text(solve_sh(src.reference))
    (dest / "solution" / "solve.sh").chmod(0o755)
    shutil.copytree(src.tests, dest / "tests", ignore=_IGNORE)
    entries = [CandidateEntry(id="reference", label="valid", role="reference", provenance="the source's reference",
                              artifact="solution/program", sha256=ref_digest)]
    for cand in panel.valid:
        entries.append(_entry(cand, "alternative", f"panel/{cand.id}", _copy(cand.path, dest / "panel" / cand.id)))
    for cand in panel.invalid:
        entries.append(_entry(cand, "invalid", f"panel/{cand.id}", _copy(cand.path, dest / "panel" / cand.id)))
    initial = {"artifact": "environment", "sha256": initial_digest}
    if panel.initial is not None:
        initial |= {"generator": panel.initial.generator, "provenance": panel.initial.provenance}
    write_manifest(dest / "panel" / "manifest.json",
                   PanelManifest(task=src.id, candidates=entries, initial=Artifact(**initial),
                                 budget={"limit": budget, "used": outputs}))
    if with_bank:
        _write_bank(src, panel, dest)


def _bank_only_rewrite(src: TaskSource, panel: Panel, dest: Path) -> Path | None:
    """A rewrite of the reference for the bank when no spare valid output exists. It is no panel
    candidate (it never reaches a label or a score), so it is not charged to the panel's budget; its
    digest differs from every panel program's, and the bank measures its test labels like any repair."""
    from testhelix.pack.generators import GenerationRequest, OfflineGenerator

    taken = {tree_sha256(src.reference), *(c.digest for c in [*panel.valid, *panel.invalid])}
    reference_text = (src.reference / src.target).read_text(encoding="utf-8")
    for number in range(1001, 1011):
        out = OfflineGenerator(number).generate(GenerationRequest(f"{src.id}:bank", "alternative", number, src.spec,
                                                                  src.target, (reference_text,)))
        if not out.files:
            continue
        path = dest / "bank" / ".draft"
        shutil.rmtree(path, ignore_errors=True)
        shutil.copytree(src.reference, path, ignore=_IGNORE)
        for rel, text in out.files.items():
            (path / rel).write_text(text, encoding="utf-8")
        if tree_sha256(path) not in taken:
            return path
    return None


def _write_bank(src: TaskSource, panel: Panel, dest: Path) -> None:
    """Bank tests = the verifier's test functions; repairs = up to one spare valid and one spare
    invalid output, named r1, r2 in digest order; labels measured by relabel_task_bank."""
    (test_file,) = sorted(src.tests.glob("test_*.py"))
    source = banks.split_bank(test_file)
    picks = [c.path for c in panel.spare if c.label == "valid"][:1]
    picks += [c.path for c in panel.spare if c.label == "invalid"][:1]
    if not any(c.label == "valid" for c in panel.spare):
        extra = _bank_only_rewrite(src, panel, dest)
        picks += [extra] if extra is not None else []
    picks.sort(key=tree_sha256)
    repairs = []
    for i, path in enumerate(picks[:BANK_REPAIRS], start=1):
        _copy(path, dest / "bank" / "repairs" / f"r{i}")
        repairs.append({"id": f"r{i}", "artifact": f"bank/repairs/r{i}"})
    (dest / "bank").mkdir(exist_ok=True)
    draft = {"header": source.header, "tests": [{"name": t.name, "source": t.source} for t in source.tests],
             "repairs": repairs}
    banks.dump_json(draft, dest / "bank" / "bank.json")
    shutil.rmtree(dest / "bank" / ".draft", ignore_errors=True)
    banks.dump_json(banks.relabel_task_bank(dest, workers=1), dest / "bank" / "bank.json")
