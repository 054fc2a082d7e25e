"""The simulation bank of a task, as the simulated models use it (format: tasks/README.md).

Only the host-side simulated model reads this (it is a test double for a provider). What it puts
into messages is limited to bank test functions (never the trusted tests) and bank repairs (never
the reference or a panel program): see `SimBank.suite_text` and `RepairOption.files`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from testhelix.errors import UserError


@dataclass(frozen=True)
class BankTest:
    name: str
    source: str
    kind: str                 # discriminating | weak | overfit | broken (measured by the pack builder)
    fails_initial: bool


@dataclass(frozen=True)
class RepairOption:
    number: int               # 1-based position among the bank repairs, the only name the model uses
    correct: bool
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

    def match_repair(self, files: dict[str, str]) -> int | None:
        """Which option a set of repair files is (0 = the unchanged initial program), if any."""
        for option in self.repairs:
            if all(files.get(path) == text for path, text in option.files):
                return option.number
        return None


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
    except (OSError, json.JSONDecodeError) as err:
        raise UserError(f"{path}: cannot read the simulation bank: {err}") from None
    tests = tuple(BankTest(t["name"], t["source"], t["kind"], bool(t["fails_initial"])) for t in data["tests"])
    repairs = []
    for number, r in enumerate(sorted(data.get("repairs", []), key=lambda r: r["id"]), start=1):
        repairs.append(RepairOption(number, bool(r["correct"]),
                                    _changed_files(Path(task_root) / r["artifact"], Path(initial_dir))))
    return SimBank(header=data["header"], tests=tests, repairs=tuple(repairs))


def bank_for(task) -> SimBank:
    if task.bank_dir is None:
        raise UserError(f"task {task.id} has no simulation bank (bank/bank.json): simulated models cannot play it")
    return load_bank(Path(task.root), Path(task.bank_dir), Path(task.initial_dir))
