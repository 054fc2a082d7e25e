"""The release ledger: which release splits a gate has already spent, for every run on the machine.

A release split is a one-time test: once a gate has seen the outcomes on it, another gate (or a
search) on the same tasks is no longer a fresh test. A run directory cannot enforce that on its
own (a new `--run` would escape it), so spent evaluations are recorded in a user-level data
directory that every gate and search consults:

    $AUTOSADDLER_DATA_DIR/release-ledger/         (the override; tests point it at a tmp folder)
    $XDG_DATA_HOME/autosaddler/release-ledger/    (else ~/.local/share/autosaddler/...)

One JSON file per spent evaluation, named by the digest of its key (pack digest, split, challenger
hash) and created exclusively, so two gates racing on one machine cannot both record the same key
silently, and nothing is ever overwritten.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from testhelix.errors import UserError

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

    @property
    def key(self) -> str:
        return ledger_key(self.pack_digest, self.split, self.challenger_hash)


def ledger_key(pack_digest: str, split: str, challenger_hash: str) -> str:
    return hashlib.sha256(f"{pack_digest}\0{split}\0{challenger_hash}".encode()).hexdigest()


class ReleaseLedger:
    def __init__(self, root: Path | None = None):
        self.root = Path(root) if root else data_dir() / "release-ledger"

    def entries(self) -> list[SpentRelease]:
        if not self.root.is_dir():
            return []
        out = []
        for path in sorted(self.root.glob("*.json")):
            try:
                out.append(SpentRelease(**json.loads(path.read_text())))
            except (OSError, ValueError, TypeError) as err:
                raise UserError(f"{path}: unreadable release-ledger entry ({err}); fix or move it, never "
                                "delete it to reuse a release split") from None
        return sorted(out, key=lambda e: e.recorded_at)

    def spent(self, pack_digest: str, split: str) -> list[SpentRelease]:
        """Earlier gates on this release split (any challenger)."""
        return [e for e in self.entries() if e.pack_digest == pack_digest and e.split == split]

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


def refuse_spent_release(ledger: ReleaseLedger, pack: str, pack_digest: str, split: str, allow_reuse: bool,
                         purpose: str = "a release gate") -> list[SpentRelease]:
    """Refuse `purpose` on a spent release split unless `allow_reuse`; returns the earlier gates."""
    earlier = ledger.spent(pack_digest, split)
    if earlier and not allow_reuse:
        first = earlier[0]
        raise UserError(
            f"split {split!r} of {pack} was already spent by release gate {first.gate_id} (run {first.run_dir}, "
            f"challenger {first.challenger_hash[:12]}, {len(earlier)} gate(s) in the release ledger "
            f"{ledger.root}); a second look is no longer a fresh test, so {purpose} is refused. Pass "
            "--allow-reuse to run it anyway (the decision is then marked as not a fresh test)")
    return earlier


def new_entry(*, pack: str, pack_digest: str, split: str, challenger_hash: str, baseline_hash: str, model: str,
              run_dir: Path, gate_id: str, promoted: bool, reused: bool) -> SpentRelease:
    return SpentRelease(pack=pack, pack_digest=pack_digest, split=split, challenger_hash=challenger_hash,
                        baseline_hash=baseline_hash, model=model, run_dir=str(Path(run_dir).resolve()),
                        gate_id=gate_id, promoted=promoted, reused=reused, recorded_at=time.time())
