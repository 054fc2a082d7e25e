"""`testhelix pack create`: build a task with a ten-program panel from any Python program, as seed
000 Appendix B builds panels (procedure, budget and criteria in panelgate.py and tasks/README.md).

Per task source (a reference program, the verifier's trusted tests, a specification, optionally an
initial program):
1. verifier validation: the trusted tests must pass on the reference (and fail on a given initial);
2. initial assembly: generated outputs -- each charged once to the task's budget -- pass the
   admission gate and are labelled by the verifier until there are 4 valid alternatives and 5
   invalid candidates (+1 faulty program to be the initial one when none is given);
3. bug report: without a given initial program, a faulty candidate becomes it, with a report from
   one failing check that does not quote the fix;
4. diversity refinement: both groups must meet the B.4 criterion; while one does not, more outputs
   of its kind are generated from the same budget. A task that runs out is excluded, and the stage
   where it stopped is counted in the funnel.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from testhelix.core.digest import tree_sha256
from testhelix.pack.bugreport import bug_report
from testhelix.pack.generators import CandidateGenerator, GenerationRequest, Intent
from testhelix.pack.panelgate import (
    PANEL_ALTERNATIVES,
    PANEL_INVALIDS,
    Budget,
    BudgetExhausted,
    Diversity,
    gate,
    label_of,
    select_group,
)
from testhelix.prism.astfeatures import ast_features

_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache")
STAGES = ("verifier validation", "initial assembly", "bug report", "diversity refinement")
STRICT_STAGE = "surviving faulty candidate"   # --strict only: a candidate generated as faulty passed


@dataclass(frozen=True)
class TaskSource:
    """Everything `pack create` needs for one task (see tasks/README.md, "pack create")."""

    id: str
    title: str
    spec: str
    reference: Path                 # program tree
    tests: Path                     # the verifier's trusted tests (a folder of test_*.py)
    target: str                     # the file (relative to the program) the generators change
    packages: tuple[str, ...]
    context: str = "general"
    difficulty: str = "medium"
    source: str = "created"
    initial: Path | None = None
    upstream: tuple[tuple[str, str], ...] = ()


@dataclass
class Candidate:
    id: str
    path: Path
    digest: str
    intent: Intent
    generator: str
    provenance: str
    label: str | None = None
    status: str = ""
    reason: str | None = None


@dataclass(frozen=True)
class RunResult:
    status: str         # pass | fail | error
    reason: str | None
    output: str


# Runs the trusted tests (folder) on each program folder; `traceback` is pytest's --tb style.
Verifier = Callable[[Path, Sequence[Path], str], list[RunResult]]


@dataclass
class Panel:
    """An admitted task's programs, ready to be written."""

    initial: Candidate | None
    report: str | None
    valid: list[Candidate]       # alternatives (the reference is the source's)
    invalid: list[Candidate]
    spare: list[Candidate] = field(default_factory=list)  # admitted but not selected (bank repairs)


@dataclass(frozen=True)
class TaskOutcome:
    task: str
    stage: str | None          # None: admitted; else the stage in STAGES where it was excluded
    reason: str
    outputs: int               # generated outputs charged to the budget
    gated: dict[str, int]      # admission-gate removals by reason class
    labels: dict[str, int]     # valid / invalid / error among the labelled outputs
    survivors: tuple[str, ...] = ()  # candidates generated as faulty that passed the verifier (labelled valid)

    def to_json(self) -> dict:
        return {"task": self.task, "stage": self.stage, "reason": self.reason, "outputs": self.outputs,
                "gated": dict(sorted(self.gated.items())), "labels": dict(sorted(self.labels.items())),
                "survivors": list(self.survivors)}


@dataclass(frozen=True)
class PanelShape:
    """How many valid alternatives and invalid programs a panel holds (seed: 4 and 5; the panel-size
    analysis of Fig. 3 draws from 7 and 7), and whether a surviving faulty candidate excludes a task."""

    alternatives: int = PANEL_ALTERNATIVES
    invalids: int = PANEL_INVALIDS
    strict: bool = False


SEED_PANEL = PanelShape()


class _Work:
    """The state of one task's construction."""

    def __init__(self, src: TaskSource, scratch: Path, budget: Budget) -> None:
        self.src, self.scratch, self.budget = src, scratch, budget
        self.ref_text = (src.reference / src.target).read_text(encoding="utf-8")
        self.program_files = {p.relative_to(src.reference).as_posix() for p in src.reference.rglob("*")
                              if p.is_file() and "__pycache__" not in p.parts}
        self.seen = {tree_sha256(src.reference)}
        if src.initial is not None:
            self.seen.add(tree_sha256(src.initial))
        self.valid: list[Candidate] = []
        self.invalid: list[Candidate] = []
        self.gated: dict[str, int] = {}
        self.labels: dict[str, int] = {}
        self.features: dict[str, frozenset[str]] = {"reference": ast_features(src.reference)}
        self.tried_initial: set[str] = set()
        self.survivors: list[str] = []

    def sources(self) -> tuple[str, ...]:
        return (self.ref_text, *((c.path / self.src.target).read_text(encoding="utf-8") for c in self.valid))

    def count(self, table: dict[str, int], key: str) -> None:
        table[key] = table.get(key, 0) + 1


def _materialise(work: _Work, number: int, files: dict[str, str]) -> Path:
    dest = work.scratch / f"out{number:02d}"
    shutil.copytree(work.src.reference, dest, ignore=_IGNORE)
    for rel, text in files.items():
        (dest / rel).write_text(text, encoding="utf-8")
    return dest


def _generate(work: _Work, intents: Sequence[Intent], generator: CandidateGenerator, verifier: Verifier) -> None:
    """Charge, generate, gate and label one output per intent (the label runs in one batch)."""
    fresh: list[Candidate] = []
    for intent in intents:
        number = work.budget.charge()
        out = generator.generate(GenerationRequest(work.src.id, intent, number, work.src.spec, work.src.target,
                                                   work.sources()))
        files = dict(out.files or {})
        digest = None
        path = None
        if files and set(files) <= work.program_files:
            path = _materialise(work, number, files)
            digest = tree_sha256(path)
        why = gate(files, work.program_files, digest, work.seen)
        if why is not None:
            work.count(work.gated, why.split(":")[0])
            if path is not None:
                shutil.rmtree(path)
            continue
        assert path is not None and digest is not None
        work.seen.add(digest)
        fresh.append(Candidate(f"g{number:02d}", path, digest, intent, out.generator, out.provenance))
    if not fresh:
        return
    for cand, run in zip(fresh, verifier(work.src.tests, [c.path for c in fresh], "line")):
        cand.status, cand.reason, cand.label = run.status, run.reason, label_of(run.status)
        work.count(work.labels, cand.label or "error")
        if cand.label == "valid":
            work.valid.append(cand)
            if cand.intent == "faulty":     # labelled valid, as the seed says; named, since it hints at weak tests
                work.survivors.append(cand.id)
        elif cand.label == "invalid":
            work.invalid.append(cand)
        if cand.label is not None:
            work.features[cand.id] = ast_features(cand.path)


def _pick_initial(work: _Work, verifier: Verifier) -> tuple[Candidate, str] | None:
    """The first invalid candidate not tried before whose bug report hides the fix."""
    todo = [c for c in work.invalid if c.id not in work.tried_initial]
    if not todo:
        return None
    runs = verifier(work.src.tests, [c.path for c in todo], "short")
    for cand, run in zip(todo, runs):
        work.tried_initial.add(cand.id)
        text, _why = bug_report(run.output, work.ref_text, (cand.path / work.src.target).read_text(encoding="utf-8"))
        if text is not None:
            return cand, text
    return None


def _given_initial_report(work: _Work, verifier: Verifier) -> tuple[str | None, str]:
    assert work.src.initial is not None
    (run,) = verifier(work.src.tests, [work.src.initial], "short")
    if run.status != "fail":
        return None, f"the verifier does not reject the initial program ({run.status}: {run.reason})"
    initial_text = (work.src.initial / work.src.target).read_text(encoding="utf-8")
    return bug_report(run.output, work.ref_text, initial_text)


def build_panel(src: TaskSource, generator: CandidateGenerator, verifier: Verifier, scratch: Path,
                budget: int, criterion: Diversity, seed: int,
                shape: PanelShape = SEED_PANEL) -> tuple[TaskOutcome, Panel | None]:
    """Run the procedure above for one task source."""
    scratch.mkdir(parents=True, exist_ok=True)
    work = _Work(src, scratch, Budget(budget))

    def outcome(stage: str | None, reason: str) -> TaskOutcome:
        return TaskOutcome(src.id, stage, reason, work.budget.used, work.gated, work.labels, tuple(work.survivors))

    (ref_run,) = verifier(src.tests, [src.reference], "line")
    if ref_run.status != "pass":
        return outcome("verifier validation", f"the verifier does not accept the reference ({ref_run.status}: "
                                              f"{ref_run.reason})"), None
    initial: Candidate | None = None
    report: str | None = None
    if src.initial is not None:
        report, why = _given_initial_report(work, verifier)
        if report is None:
            return outcome("verifier validation" if why.startswith("the verifier") else "bug report", why), None
    try:
        while True:
            need_valid = shape.alternatives - len(work.valid)
            need_invalid = shape.invalids + (1 if src.initial is None else 0) - len(work.invalid)
            if need_valid <= 0 and need_invalid <= 0:
                break
            alternatives: list[Intent] = ["alternative"] * max(0, need_valid)
            faulty: list[Intent] = ["faulty"] * max(0, need_invalid)
            intents = alternatives + faulty
            _generate(work, intents[:max(1, work.budget.left)], generator, verifier)
    except BudgetExhausted:
        return outcome("initial assembly", f"the budget of {budget} outputs ran out with {len(work.valid)} valid "
                                           f"alternatives and {len(work.invalid)} invalid candidates"), None
    group_seed = f"{seed}:{src.id}"
    try:
        while src.initial is None and initial is None:
            picked = _pick_initial(work, verifier)
            if picked is not None:
                initial, report = picked
                break
            _generate(work, ["faulty"], generator, verifier)
        while True:
            pool_invalid = [c for c in work.invalid if c is not initial]
            valid_ids, valid_ok = select_group(["reference"], [c.id for c in work.valid], 1 + shape.alternatives,
                                               work.features, criterion, group_seed)
            invalid_ids, invalid_ok = select_group([], [c.id for c in pool_invalid], shape.invalids, work.features,
                                                   criterion, group_seed)
            if valid_ok and invalid_ok:
                break
            intent: Intent = "alternative" if not valid_ok else "faulty"
            _generate(work, [intent], generator, verifier)
    except BudgetExhausted:
        if src.initial is None and initial is None:
            return outcome("bug report", f"no faulty candidate's bug report hides the fix within the budget of "
                                         f"{budget} outputs"), None
        return outcome("diversity refinement", f"the groups miss the B.4 criterion (pair >= {criterion.min_pair}, "
                                               f"mean >= {criterion.min_mean}) when the budget of {budget} ran out"), None
    if shape.strict and work.survivors:
        return outcome(STRICT_STAGE, f"--strict: candidate(s) generated as faulty passed every check "
                                     f"({', '.join(work.survivors)}): the verifier's tests may be weak"), None
    chosen = set(valid_ids) | set(invalid_ids)
    by_id = {c.id: c for c in [*work.valid, *work.invalid]}
    spare = [c for c in [*work.valid, *work.invalid] if c.id not in chosen and c is not initial]
    panel = Panel(initial, report, [by_id[i] for i in valid_ids[1:]], [by_id[i] for i in invalid_ids], spare)
    return outcome(None, "admitted"), panel
