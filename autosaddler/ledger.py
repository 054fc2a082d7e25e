"""The release ledger: which release tasks a gate has already spent, for every run on the machine.

A release split is a one-time test: once a gate has seen the outcomes on some tasks, another gate
(or a search) on those tasks is no longer a fresh test. A run directory cannot enforce that on its
own (a new `--run` would escape it), so spent evaluations are recorded in a user-level data
directory that every gate and search consults:

    $AUTOSADDLER_DATA_DIR/release-ledger/         (the override; tests point it at a tmp folder)
    $XDG_DATA_HOME/autosaddler/release-ledger/    (else ~/.local/share/autosaddler/...)

An entry records the task ids, the challenger and baseline hashes, the model and the decision, so
the ledger follows tasks, not split names: a new split file that moves spent tasks into another
split is caught. A gate whose tasks overlap spent ones is refused, naming the overlap -- unless it
is the same challenger and baseline with the same model on the same tasks: that is the same test,
not a new look, and the recorded decision is returned (and said to be a replay). One JSON file per
entry, named by the digest of its key and created exclusively, so two gates racing on one machine
cannot both record the same key silently, and nothing is ever overwritten. Entries written before
task ids were recorded count as spending every task of their split name.

A search configuration chooses the ledger its gates use (`release_ledger`): the machine-wide one
(every preset but the demo) or one inside the gate's run folder (`<run>/release-ledger/`, the demo
preset's), so that the README demo's look cannot block a user's first real gate on the same split;
the gate's output names the ledger it used.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

from testhelix.core.errors import UserError

DATA_DIR_ENV = "AUTOSADDLER_DATA_DIR"
REUSE_NOTE = ("--allow-reuse: this release split was already spent by an earlier gate, so this decision is no "
              "longer a fresh test (its p-value and intervals overstate the evidence)")


def data_dir() -> Path:
    override = os.environ.get(DATA_DIR_ENV)
    if override:
        return Path(override)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "autosaddler"


@dataclass(frozen=True)
class SpentRelease:
    pack: str
    pack_digest: str
    split: str
    challenger_hash: str
    baseline_hash: str
    model: str
    run_dir: str
    gate_id: str
    promoted: bool
    reused: bool                  # recorded with --allow-reuse (not a fresh test)
    recorded_at: float
    task_ids: tuple[str, ...] = ()   # empty in entries from before tasks were recorded
    result: dict | None = None       # the gate's result (GateResult.to_json), replayed for the same test

    @property
    def key(self) -> str:
        return ledger_key(self.task_ids, self.challenger_hash, self.baseline_hash, self.model)

    def same_test(self, task_ids: list[str], challenger_hash: str, baseline_hash: str, model: str) -> bool:
        return (bool(self.task_ids) and sorted(self.task_ids) == sorted(task_ids) and self.result is not None
                and (self.challenger_hash, self.baseline_hash, self.model) == (challenger_hash, baseline_hash, model))


def ledger_key(task_ids: Iterable[str], challenger_hash: str, baseline_hash: str, model: str) -> str:
    body = "\0".join([*sorted(task_ids), "", challenger_hash, baseline_hash, model])
    return hashlib.sha256(body.encode()).hexdigest()


RUN_LEDGER = "release-ledger"   # the folder of a run-scoped ledger inside a gate's run folder


class ReleaseLedger:
    def __init__(self, root: Path | None = None):
        self.root = Path(root) if root else data_dir() / "release-ledger"

    @classmethod
    def for_scope(cls, scope: str, run_dir: Path) -> ReleaseLedger:
        """`machine`: the machine-wide ledger; `run`: one inside the run folder (the demo preset's,
        so that the demo's look cannot block a user's later gate on the same split)."""
        return cls(Path(run_dir) / RUN_LEDGER) if scope == "run" else cls()

    def describe(self) -> str:
        scoped = self.root.resolve() != ReleaseLedger().root.resolve()
        return (f"{self.root} (this run folder's own ledger: the look is recorded here only, so it does not block "
                "a later gate on these tasks; gates with the paper preset use the machine-wide ledger "
                f"{ReleaseLedger().root})" if scoped else f"{self.root} (machine-wide)")

    def entries(self) -> list[SpentRelease]:
        if not self.root.is_dir():
            return []
        out = []
        for path in sorted(self.root.glob("*.json")):
            try:
                data = json.loads(path.read_text())
                data["task_ids"] = tuple(data.get("task_ids", ()))
                out.append(SpentRelease(**data))
            except (OSError, ValueError, TypeError, AttributeError) as err:
                raise UserError(f"{path}: unreadable release-ledger entry ({err}); fix or move it, never "
                                "delete it to reuse a release split") from None
        return sorted(out, key=lambda e: e.recorded_at)

    def overlapping(self, pack_digest: str, split: str, task_ids: list[str]) -> list[tuple[SpentRelease, list[str]]]:
        """Earlier gates that spent any of `task_ids`, each with the tasks in common (an entry
        without task ids: every task of the same pack and split name)."""
        wanted, out = set(task_ids), []
        for e in self.entries():
            common = (wanted & set(e.task_ids) if e.task_ids
                      else wanted if (e.pack_digest, e.split) == (pack_digest, split) else set())
            if common:
                out.append((e, sorted(common)))
        return out

    def record(self, entry: SpentRelease) -> Path:
        self.root.mkdir(parents=True, exist_ok=True)
        base = self.root / entry.key
        path, n = base.with_suffix(".json"), 1
        while True:  # a reused key gets a numbered file: the ledger only ever grows
            try:
                with path.open("x") as fh:
                    json.dump(asdict(entry), fh, indent=1, sort_keys=True)
                return path
            except FileExistsError:
                n += 1
                path = self.root / f"{entry.key}.{n}.json"


def earlier_looks(ledgers: Iterable[ReleaseLedger], pack_digest: str) -> int:
    """How many gates these ledgers (each counted once) recorded on tasks of the pack with this digest."""
    unique = {ledger.root.resolve(): ledger for ledger in ledgers}
    return sum(1 for ledger in unique.values() for e in ledger.entries() if e.pack_digest == pack_digest)


def check_release(ledger: ReleaseLedger, *, pack: str, pack_digest: str, split: str, task_ids: list[str],
                  challenger_hash: str, baseline_hash: str, model: str,
                  allow_reuse: bool) -> tuple[SpentRelease | None, list[SpentRelease]]:
    """Before a gate: (the entry to replay when this exact test was already decided, the earlier
    gates that spent some of these tasks). Any other overlap is refused unless `allow_reuse`."""
    earlier = ledger.overlapping(pack_digest, split, task_ids)
    same = [e for e, _ in earlier if e.same_test(task_ids, challenger_hash, baseline_hash, model)]
    if earlier and len(same) == len(earlier) and not allow_reuse:
        return same[0], []
    if earlier and not allow_reuse:
        refuse_overlap(earlier, pack, len(task_ids), ledger, "a release gate")
    return None, [e for e, _ in earlier]


def refuse_spent_tasks(ledger: ReleaseLedger, pack: str, pack_digest: str, split: str, task_ids: list[str],
                       purpose: str) -> None:
    """A search may use no task a gate has spent."""
    earlier = ledger.overlapping(pack_digest, split, task_ids)
    if earlier:
        refuse_overlap(earlier, pack, len(task_ids), ledger, purpose)


def refuse_overlap(earlier: list[tuple[SpentRelease, list[str]]], pack: str, n: int, ledger: ReleaseLedger,
                   purpose: str) -> None:
    first, common = earlier[0]
    spent = sorted({t for _, c in earlier for t in c})
    shown = ", ".join(spent[:5]) + (f", ... ({len(spent) - 5} more)" if len(spent) > 5 else "")
    raise UserError(
        f"{len(spent)} of these {n} tasks of {pack} were already spent by release gate {first.gate_id} (run "
        f"{first.run_dir}, challenger {first.challenger_hash[:12]}, baseline {first.baseline_hash[:12]}, model "
        f"{first.model}; {len(earlier)} gate(s) in the release ledger {ledger.root}): {shown}. A second look at "
        f"them is no longer a fresh test, so {purpose} is refused (only the same challenger and baseline with the "
        "same model on the same tasks replays its recorded decision). Pass --allow-reuse to run a gate anyway "
        "(the decision is then marked as not a fresh test)")


def new_entry(*, pack: str, pack_digest: str, split: str, task_ids: list[str], challenger_hash: str,
              baseline_hash: str, model: str, run_dir: Path, gate_id: str, result: dict,
              reused: bool) -> SpentRelease:
    return SpentRelease(pack=pack, pack_digest=pack_digest, split=split, challenger_hash=challenger_hash,
                        baseline_hash=baseline_hash, model=model, run_dir=str(Path(run_dir).resolve()),
                        gate_id=gate_id, promoted=bool(result["promoted"]), reused=reused, recorded_at=time.time(),
                        task_ids=tuple(sorted(task_ids)), result=result)
