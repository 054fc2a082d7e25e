"""`testhelix pack build`: turn hand-written katas into a task pack (format in tasks/README.md).

For each kata and each defect mutation d, one task `katas-<kata>-<d>`: initial program = reference
+ d; panel = the reference, 4 alternatives and 5 invalid candidates picked for AST diversity from
d's first wrong fix (always in) and reference + e for the other mutations e; plus a simulation
bank. Every label is confirmed by running the trusted tests; a task whose labels do not hold is
dropped with a printed reason. The output is a pure function of the katas and the seed: files are
written with sorted keys and fixed newlines, with no timestamps, so two builds are byte-identical.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from testhelix.core.digest import file_sha256, tree_sha256
from testhelix.core.errors import UserError
from testhelix.pack import bank as banks
from testhelix.pack.diversity import select_diverse
from testhelix.pack.instructions import VERIFIER_TIMEOUT_S, instruction, leaked_fix, solve_sh, task_toml
from testhelix.pack.kata import Kata, Mutation, load_kata, write_variant
from testhelix.pack.runner import Job, SuiteRun, run_each, run_jobs
from testhelix.prism.astfeatures import ast_features
from testhelix.tasks.model import Artifact, CandidateEntry, PanelManifest, write_manifest

PANEL_ALTERNATIVES, PANEL_INVALIDS = 4, 5
PACK_INDEX = "pack.json"
_IGNORE = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", ".hypothesis")


@dataclass(frozen=True)
class Variant:
    """One program of a kata, materialised in the scratch folder."""

    name: str  # reference | altN | mut:<m> | fix:<m>:<i> | wrong:<m>:<i>
    path: Path
    digest: str


@dataclass
class KataPrograms:
    kata: Kata
    bank: banks.BankSource
    variants: dict[str, Variant] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)  # variants that could not be written
    tests_digest: str = ""
    bank_digest: str = ""

    def trusted_key(self, name: str) -> str:
        return f"trusted:{self.tests_digest}:{self.variants[name].digest}"

    def bank_key(self, name: str) -> str:
        return f"bank:{self.bank_digest}:{self.variants[name].digest}"


@dataclass(frozen=True)
class BuildReport:
    tasks: tuple[str, ...]
    dropped: tuple[tuple[str, str], ...]  # (task or kata id, reason)
    contexts: dict[str, int]
    runs: int


def _copy_program(src: Path, dest: Path) -> Path:
    return Path(shutil.copytree(src, dest, ignore=_IGNORE))


def _materialise(kata: Kata, scratch: Path) -> KataPrograms:
    progs = KataPrograms(kata, tests_digest=tree_sha256(kata.trusted_tests_dir), bank_digest=file_sha256(kata.bank_tests),
                         bank=banks.split_bank(kata.bank_tests))
    root = scratch / kata.id
    root.mkdir(parents=True)

    def add(name: str, make: Callable[[Path], Path]) -> None:
        dest = root / name.replace(":", "__")
        try:
            make(dest)
        except UserError as err:
            progs.problems.append(f"{name}: {err.message}")
            shutil.rmtree(dest, ignore_errors=True)
            return
        progs.variants[name] = Variant(name, dest, tree_sha256(dest))

    add("reference", partial(write_variant, kata))
    for alt in kata.alternative_dirs[:PANEL_ALTERNATIVES]:
        add(alt.name, partial(_copy_program, alt))
    for m in kata.mutations:
        add(f"mut:{m.id}", partial(write_variant, kata, mutation=m))
        if not m.defect:
            continue
        for i, fix in enumerate(m.fixes):
            add(f"fix:{m.id}:{i}", partial(write_variant, kata, mutation=m, repair=fix))
        for i, wrong in enumerate(m.wrong_fixes):
            add(f"wrong:{m.id}:{i}", partial(write_variant, kata, mutation=m, repair=wrong))
    return progs


def _bank_targets(progs: KataPrograms) -> list[str]:
    """Programs the bank runs on: what an agent could run its tests on itself -- the initial
    program of each task (reference + a defect) and the bank's candidate repairs of each defect
    (the defect's fixes and its wrong fixes after the first, which goes to the panel). Never the
    reference, an alternative or an invalid candidate: the bank's labels must not see the panel."""
    defects = {m.id for m in progs.kata.mutations if m.defect}
    out = []
    for n in progs.variants:
        kind, _, rest = n.partition(":")
        mutation, _, index = rest.partition(":")
        if mutation in defects and (kind in ("mut", "fix") or (kind == "wrong" and index != "0")):
            out.append(n)
    return out


def _jobs(progs: KataPrograms) -> list[Job]:
    kata = progs.kata
    jobs = [Job(progs.trusted_key(n), kata.trusted_tests_dir, v.path, VERIFIER_TIMEOUT_S) for n, v in progs.variants.items()]
    jobs += [Job(progs.bank_key(n), kata.bank_tests, progs.variants[n].path, VERIFIER_TIMEOUT_S) for n in _bank_targets(progs)]
    return jobs


@dataclass(frozen=True)
class PlannedTask:
    id: str
    kata: Kata
    defect: Mutation
    initial: str                  # variant names
    valid: tuple[str, ...]        # reference first
    invalid: tuple[str, ...]      # partial repair first, then other mutations
    # (repair id, variant name, correct): the pool is screened by the trusted tests when it is built
    # (a 'wrong' fix that happens to be correct is left out), but `correct` never reaches bank.json
    repairs: tuple[tuple[str, str, bool], ...]


def _plan(progs: KataPrograms, defect: Mutation, trusted: dict[str, SuiteRun], seed: int,
          features: Callable[[str], frozenset[str]], log: Callable[[str], None]) -> PlannedTask | str:
    """The task for `defect`, or the reason it cannot be built."""
    kata, have = progs.kata, progs.variants

    def passes(name: str) -> bool:
        return trusted[progs.trusted_key(name)].passed

    def fails(name: str) -> bool:
        # A clean failure: a timeout or a run where nothing ran is no label a scorer can trust.
        return trusted[progs.trusted_key(name)].status == "fail"

    task_id = f"katas-{kata.id}-{defect.id}"
    leak = leaked_fix(defect)
    if leak:
        return f"the bug report quotes the fix {leak!r}"
    valid = ["reference", *(a.name for a in kata.alternative_dirs[:PANEL_ALTERNATIVES])]
    missing = [n for n in valid if n not in have]
    if missing or len(valid) < 1 + PANEL_ALTERNATIVES:
        return f"kata lacks valid programs ({len(valid) - 1} alternatives; could not write {missing})"
    failing_valid = [f"{n} ({trusted[progs.trusted_key(n)].reason})" for n in valid if not passes(n)]
    if failing_valid:
        return f"valid programs fail the trusted tests: {', '.join(failing_valid)}"
    initial, partial = f"mut:{defect.id}", f"wrong:{defect.id}:0"
    if initial not in have:
        return "the defect could not be applied to the reference"
    if not fails(initial):
        reason = trusted[progs.trusted_key(initial)].reason or "all pass"
        return f"the initial program (reference + defect) does not fail the trusted tests ({reason})"
    if partial not in have or not fails(partial):
        return "the first wrong fix is missing or does not fail the trusted tests"
    taken = {have[initial].digest, have[partial].digest} | {have[n].digest for n in valid}
    pool = []
    for m in kata.mutations:
        name = f"mut:{m.id}"
        if m.id == defect.id or name not in have:
            continue
        if not fails(name):
            log(f"  {task_id}: skipping {name} as an invalid candidate: it does not fail the trusted tests")
        elif have[name].digest not in taken:
            taken.add(have[name].digest)
            pool.append(name)
    if len(pool) < PANEL_INVALIDS - 1:
        return f"only {len(pool) + 1} invalid candidates available (need {PANEL_INVALIDS})"
    invalid = select_diverse([partial], pool, PANEL_INVALIDS, {n: features(n) for n in [partial, *pool]},
                             seed=f"{seed}:{task_id}")
    repairs = []
    for i in range(len(defect.fixes)):
        name = f"fix:{defect.id}:{i}"
        if name in have and passes(name):
            repairs.append((f"fix{i}", name, True))
        else:
            log(f"  {task_id}: leaving out bank repair {name}: it is missing or fails the trusted tests")
    for i in range(1, len(defect.wrong_fixes)):
        name = f"wrong:{defect.id}:{i}"
        if name in have and fails(name):
            repairs.append((f"wrong{i}", name, False))
        else:
            log(f"  {task_id}: leaving out bank repair {name}: it is missing or does not fail the trusted tests")
    return PlannedTask(task_id, kata, defect, initial, tuple(valid), tuple(invalid), tuple(repairs))


def _copy(src: Path, dest: Path) -> str:
    shutil.copytree(src, dest, ignore=_IGNORE)
    return tree_sha256(dest)


def _candidate_id(task: PlannedTask, name: str) -> str:
    if name.startswith("wrong:"):
        return f"inv-{task.defect.id}-wrong0"
    return f"inv-{name.split(':', 1)[1]}"


def _provenance(task: PlannedTask, name: str) -> str:
    if name.startswith("wrong:"):
        return f"partial repair of {task.defect.id} (its first listed wrong fix); still fails: {task.defect.description}"
    other = task.kata.mutation(name.split(":", 1)[1])
    return f"fixes {task.defect.id} but breaks: {other.description}"


def _write_task(task: PlannedTask, progs: KataPrograms, bank_runs: dict[str, SuiteRun], source: banks.BankSource,
                dest: Path) -> None:
    kata, have = task.kata, progs.variants
    dest.mkdir()
    (dest / "task.toml").write_text(task_toml(task.id, kata))
    (dest / "instruction.md").write_text(instruction(kata, task.defect))
    initial_digest = _copy(have[task.initial].path, dest / "environment")
    solution = dest / "solution"
    ref_digest = _copy(have["reference"].path, solution / "program")
    (solution / "solve.sh").write_text(solve_sh(kata))
    (solution / "solve.sh").chmod(0o755)
    shutil.copytree(kata.trusted_tests_dir, dest / "tests", ignore=_IGNORE)
    candidates = [{"id": "reference", "label": "valid", "role": "reference",
                   "provenance": "kata reference implementation", "artifact": "solution/program", "sha256": ref_digest}]
    for name in task.valid[1:]:
        candidates.append({"id": name, "label": "valid", "role": "alternative",
                           "provenance": f"independently written alternative {name}", "artifact": f"panel/{name}",
                           "sha256": _copy(have[name].path, dest / "panel" / name)})
    for name in task.invalid:
        cid = _candidate_id(task, name)
        candidates.append({"id": cid, "label": "invalid", "role": "invalid", "provenance": _provenance(task, name),
                           "artifact": f"panel/{cid}", "sha256": _copy(have[name].path, dest / "panel" / cid)})
    write_manifest(dest / "panel" / "manifest.json",
                   PanelManifest(task=task.id, candidates=[CandidateEntry(**c) for c in candidates],
                                 initial=Artifact(artifact="environment", sha256=initial_digest)))
    names = [t.name for t in source.tests]

    def passmap(name: str) -> dict[str, bool]:
        return banks.per_function(bank_runs[progs.bank_key(name)], names)

    # Neutral repair names in tree-digest order: neither the name nor the position tells a
    # correct repair from a wrong one.
    repairs = []
    for i, (_, name, _) in enumerate(sorted(task.repairs, key=lambda r: have[r[1]].digest), start=1):
        rid = f"r{i}"
        _copy(have[name].path, dest / "bank" / "repairs" / rid)
        repairs.append((banks.Repair(rid, dest / "bank" / "repairs" / rid), passmap(name)))
    doc = banks.bank_document(source, passmap(task.initial), repairs)
    (dest / "bank").mkdir(exist_ok=True)
    banks.dump_json(doc, dest / "bank" / "bank.json")


def _prepare_out(out: Path) -> None:
    """Refuse to replace a folder that is not a pack this command wrote."""
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / PACK_INDEX).is_file())):
        raise UserError(f"{out}: exists and is not a pack written by `testhelix pack build` (no {PACK_INDEX}); "
                        "refusing to overwrite")


def build_pack(src: Path, out: Path, seed: int = 42, workers: int = 2, katas: tuple[str, ...] = (),
               log: Callable[[str], None] = print) -> BuildReport:
    src, out = Path(src), Path(out)
    if not src.is_dir():
        raise UserError(f"{src}: kata source folder does not exist")
    folders = sorted(p for p in src.iterdir() if (p / "kata.toml").is_file())
    if katas:
        unknown = sorted(set(katas) - {p.name for p in folders})
        if unknown:
            raise UserError(f"--kata: no kata named {', '.join(unknown)} in {src}")
        folders = [p for p in folders if p.name in katas]
    # Only the selected katas are loaded, so a kata still being written cannot stop the build.
    all_katas = [load_kata(p) for p in folders]
    if not all_katas:
        raise UserError(f"{src}: no kata folders (with kata.toml) found")
    _prepare_out(out)
    dropped: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory(prefix="pack-build-") as scratch_name:
        scratch = Path(scratch_name)
        programs = []
        for kata in all_katas:
            progs = _materialise(kata, scratch / "programs")
            for problem in progs.problems:
                log(f"  {kata.id}: could not write variant {problem}")
            programs.append(progs)
        jobs = [job for progs in programs for job in _jobs(progs)]
        log(f"running {len({j.key for j in jobs})} distinct test runs for {len(all_katas)} katas on {workers} workers")
        step = max(1, len({j.key for j in jobs}) // 10)

        def report(done: int, total: int) -> None:  # about every tenth of the runs
            if done % step == 0 or done == total:
                log(f"  {done}/{total} runs done")

        runs = run_jobs(jobs, workers, progress=report)
        _rerun_bank_timeouts(programs, runs, log)
        staging = out.parent / f".{out.name}.building"
        shutil.rmtree(staging, ignore_errors=True)
        staging.mkdir(parents=True)
        try:
            built, kata_index, contexts = _write_pack(programs, runs, staging, seed, dropped, log)
            banks.dump_json({"source": "katas", "builder": "testhelix pack build", "seed": seed,
                             "tasks": built, "contexts": contexts, "katas": kata_index,
                             "dropped": [{"task": t, "reason": r} for t, r in sorted(dropped)]}, staging / PACK_INDEX)
            if out.exists():
                shutil.rmtree(out)
            staging.rename(out)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return BuildReport(tuple(built), tuple(sorted(dropped)), contexts, len(runs))


def _rerun_bank_timeouts(programs: list[KataPrograms], runs: dict[str, SuiteRun], log: Callable[[str], None]) -> None:
    for progs in programs:
        names = None
        for name in _bank_targets(progs):
            key = progs.bank_key(name)
            if runs[key].reason != "timeout":
                continue
            names = names or [t.name for t in progs.bank.tests]
            log(f"  {progs.kata.id}: bank run on {name} timed out; running its tests one by one")
            runs[key] = run_each(progs.kata.bank_tests, progs.variants[name].path, names)


def _write_pack(programs: list[KataPrograms], runs: dict[str, SuiteRun], staging: Path, seed: int,
                dropped: list[tuple[str, str]], log: Callable[[str], None]) -> tuple[list[str], dict, dict[str, int]]:
    built: list[str] = []
    kata_index = {}
    contexts = {context: 0 for context in sorted({p.kata.context for p in programs})}
    for progs in programs:
        kata = progs.kata
        source = progs.bank
        cache: dict[str, frozenset[str]] = {}

        def features(name: str, progs: KataPrograms = progs, cache: dict = cache) -> frozenset[str]:
            if name not in cache:
                cache[name] = ast_features(progs.variants[name].path)
            return cache[name]

        kata_tasks = []
        for defect in kata.defects:
            planned = _plan(progs, defect, runs, seed, features, log)
            task_id = f"katas-{kata.id}-{defect.id}"
            if isinstance(planned, str):
                log(f"DROPPED {task_id}: {planned}")
                dropped.append((task_id, planned))
                continue
            _write_task(planned, progs, runs, source, staging / task_id)
            kata_tasks.append(task_id)
        built += kata_tasks
        kata_index[kata.id] = {"context": kata.context, "difficulty": kata.difficulty,
                               "source_sha256": tree_sha256(kata.root), "tasks": len(kata_tasks)}
        contexts[kata.context] += len(kata_tasks)
    return sorted(built), kata_index, contexts
