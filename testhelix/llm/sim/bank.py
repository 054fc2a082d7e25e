"""The simulation bank of a task, as the simulated models use it (format: tasks/README.md).

The bank is the simulated model's private pool of candidate tests and candidate repairs. Every
label in it was measured by running the bank's tests on the task's initial program and on the
bank's own repairs (testhelix/pack/bank.py), i.e. on what an agent could run itself. From those
runs this module derives what the simulated agent and reviewer reason with:

- a repair's *support*: how many reproducing tests it makes pass, minus how many tests that pass
  on the initial program it breaks; the *preferred* repairs are those with the highest support;
- a test's role: `reproduces` (fails the initial program, passes a preferred repair), a `guard`
  (passes the initial program and every preferred repair), or `suspect` (everything else: it fails
  a preferred repair);
- `incidental`: what a reader sees in a test's text -- it matches an error message, compares a
  repr or an exact error stream, or reaches into a private name.

Nothing here reads the reference, the panel or the trusted tests, and what the model writes into
messages is limited to bank test functions and bank repairs.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from testhelix.core.errors import UserError

if TYPE_CHECKING:
    from testhelix.tasks.task import Task

_INCIDENTAL = (
    (re.compile(r"\bmatch\s*="), "matches the text of an error message"),
    (re.compile(r"\brepr\("), "compares a repr"),
    (re.compile(r"\berr\s*=="), "compares the exact error stream"),
    (re.compile(r"(?:\w\._[A-Za-z]\w*|[\"']_[A-Za-z]\w*[\"'])"), "reaches into a private name"),
)
REPAIR_NOTE = "# Repair written for: "


def incidental_reasons(source: str) -> list[str]:
    """Why a reader would call a test incidental, from its text alone."""
    return [why for pattern, why in _INCIDENTAL if pattern.search(source)]


@dataclass(frozen=True)
class BankTest:
    name: str
    source: str
    fails_initial: bool
    passes: frozenset[int]          # numbers of the bank repairs this test passes on
    incidental: tuple[str, ...]     # reasons from the text (incidental_reasons)


@dataclass(frozen=True)
class RepairOption:
    number: int               # 1-based position among the bank repairs, the only name the model uses
    files: tuple[tuple[str, str], ...]   # (path inside the program, text) that differ from the initial program


@dataclass(frozen=True)
class SimBank:
    header: str
    tests: tuple[BankTest, ...]
    repairs: tuple[RepairOption, ...]

    def test(self, name: str) -> BankTest | None:
        return next((t for t in self.tests if t.name == name), None)

    def suite_text(self, names: list[str]) -> str:
        chosen = [self.test(n) for n in names]
        body = "\n\n\n".join(t.source.strip() for t in chosen if t is not None)
        return f"{self.header.rstrip()}\n\n\n{body}\n"

    # --- what runs on the initial program and the own repairs show --------------------------
    def support(self, number: int) -> int:
        fixed = sum(1 for t in self.tests if t.fails_initial and number in t.passes)
        broken = sum(1 for t in self.tests if not t.fails_initial and number not in t.passes)
        return fixed - broken

    @property
    def preferred(self) -> frozenset[int]:
        if not self.repairs:
            return frozenset()
        best = max(self.support(o.number) for o in self.repairs)
        return frozenset(o.number for o in self.repairs if self.support(o.number) == best)

    def role(self, name: str) -> str:
        test = self.test(name)
        if test is None:
            return "unknown"
        preferred = self.preferred
        passes_preferred = bool(preferred) and preferred <= test.passes
        if not passes_preferred:
            return "suspect"
        return "reproduces" if test.fails_initial else "guard"

    def repair_number(self, rel: str, text: str) -> int:
        """Which option a repair file is (0 = none), ignoring the agent's own note line."""
        plain = strip_note(text).rstrip("\n")
        return next((o.number for o in self.repairs if dict(o.files).get(rel, "\0").rstrip("\n") == plain), 0)


def strip_note(text: str) -> str:
    return "".join(line for line in text.splitlines(keepends=True) if not line.startswith(REPAIR_NOTE))


def _changed_files(program: Path, initial: Path) -> tuple[tuple[str, str], ...]:
    out = []
    for path in sorted(p for p in program.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        rel = str(path.relative_to(program))
        text = path.read_text()
        original = initial / rel
        if not original.is_file() or original.read_text() != text:
            out.append((rel, text))
    return tuple(out)


@lru_cache(maxsize=64)
def load_bank(task_root: Path, bank_dir: Path, initial_dir: Path) -> SimBank:
    path = Path(bank_dir) / "bank.json"
    try:
        data = json.loads(path.read_text())
        entries = sorted(data.get("repairs", []), key=lambda r: r["id"])
        numbers = {r["id"]: n for n, r in enumerate(entries, start=1)}
        tests = tuple(BankTest(t["name"], t["source"], bool(t["fails_initial"]),
                               frozenset(numbers[i] for i in t["passes_repairs"]), tuple(incidental_reasons(t["source"])))
                      for t in data["tests"])
    except (OSError, json.JSONDecodeError) as err:
        raise UserError(f"{path}: cannot read the simulation bank: {err}") from None
    except (KeyError, TypeError) as err:
        raise UserError(f"{path}: not a simulation bank in the current format (tasks/README.md): missing {err}; "
                        "rebuild it with `testhelix pack build`") from None
    repairs = tuple(RepairOption(numbers[r["id"]], _changed_files(Path(task_root) / r["artifact"], Path(initial_dir)))
                    for r in entries)
    return SimBank(header=data["header"], tests=tests, repairs=repairs)


def bank_for(task: Task) -> SimBank:
    if task.bank_dir is None:
        raise UserError(f"task {task.id} has no simulation bank (bank/bank.json): simulated models cannot play it")
    return load_bank(Path(task.root), Path(task.bank_dir), Path(task.initial_dir))
