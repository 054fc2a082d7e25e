"""The bundled benchmark `benchmark`: the construction front end (construct.py) run over the bundled
packs, final admission, and what it writes -- tasks/benchmark.json (per task: source, source id,
pool, the three signals, ΔC and Entry Coverage applicability), the funnel (docs/benchmark.md), the
split file (splits/benchmark.json) and the composite pack entry in tasks/bundled.json (its tasks are
the member packs' task folders, assembled on first use; testhelix/core/bundled_data.py).

Final admission of a candidate test task (seed 000): ΔC and Entry Coverage are both applicable
(the trusted tests execute at least one changed line, and call at least one entry point whose body
has measured statements: prism/coverage.py's targets, measured in the sandbox), the panel holds ten
programs (reference, 4 valid, 5 invalid) whose two groups meet the B.4 criterion the pack was built
with, and every program's tree digest matches the manifest.
"""

from __future__ import annotations

import json
import random
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from testhelix.core.digest import file_sha256, tree_sha256
from testhelix.core.readers import read_toml
from testhelix.pack import construct as fe
from testhelix.pack.panelgate import PANEL_ALTERNATIVES, PANEL_INVALIDS, Diversity
from testhelix.prism.astfeatures import ast_features

NAME = "benchmark"
SOURCES = ("katas", "humaneval", "mbpp")
MANIFEST = "benchmark.json"
APPLICABLE = "applicable"


def _pack_index(pack: Path) -> dict:
    path = pack / "pack.json"
    return json.loads(path.read_text()) if path.is_file() else {}


def _task_dirs(pack: Path) -> dict[str, Path]:
    return {p.name: p for p in sorted(pack.iterdir()) if not p.name.startswith(".") and (p / "task.toml").is_file()}


def pack_records(source: str, pack: Path) -> list[fe.Record]:
    """Records of a pack whose tasks are all admitted (katas: a kata's mutants are one group)."""
    out = []
    for task, folder in _task_dirs(pack).items():
        meta = read_toml(folder / "task.toml").get("metadata", {})
        out.append(fe.record(source, task, task, str(meta.get("kata", task)), str(meta.get("context", "general")),
                             folder / "solution" / "program", folder / "tests", folder / "environment", None))
    return out


def source_records(source: str, data: Path, pack: Path) -> list[fe.Record]:
    """Records of every problem of a converted source (humaneval, mbpp), joined with the panel
    build's outcome in `pack` (admitted, the excluded stage, or "not built")."""
    from testhelix.pack import humaneval, mbpp

    writer = humaneval.write_sources if source == "humaneval" else mbpp.write_sources
    built = _task_dirs(pack)
    stage = {e["task"]: e["stage"] for e in _pack_index(pack).get("excluded", [])}
    out = []
    with tempfile.TemporaryDirectory(prefix="benchmark-sources-") as tmp:
        sources, _refused = writer(data, Path(tmp))
        for src in sources:
            panel = None if src.id in built else stage.get(src.id, "not built")
            upstream = dict(src.upstream)
            out.append(fe.record(source, src.id, upstream.get("source_id", src.id), src.id, src.context,
                                 src.reference, src.tests, None, panel))
    return out


def measure_applicability(executor: Any, tasks: list[Path]) -> list[dict[str, str]]:
    """ΔC and Entry Coverage applicability of built tasks, from the trusted tests' coverage on the
    initial program and the reference (all runs of the batch at once)."""
    from testhelix.execution.outcome import Limits
    from testhelix.prism.coverage import REPORT_OUTPUT_BYTES, parse_line_report, targets_from_runs

    limits = Limits(output_bytes=REPORT_OUTPUT_BYTES)
    jobs = [(t / "tests", t / state) for t in tasks for state in ("environment", "solution/program")]
    outcomes = executor.run_many(jobs, limits, coverage=True)
    out = []
    for i, task in enumerate(tasks):
        on = [parse_line_report(outcomes[2 * i + k].output or "", jobs[2 * i + k][1]) for k in (0, 1)]
        targets = targets_from_runs(task / "environment", task / "solution" / "program", task / "tests", *on)
        if targets.status != "ok":
            why = f"not applicable: coverage of the trusted tests failed ({targets.reason})"
            out.append({"delta_c": why, "entry_coverage": why})
            continue
        out.append({"delta_c": APPLICABLE if targets.change else "not applicable: the trusted tests execute no changed line",
                    "entry_coverage": APPLICABLE if targets.entry else
                    "not applicable: the trusted tests call no unique entry point with measured statements"})
    return out


def panel_problem(task: Path, criterion: Diversity) -> str | None:
    """Why the task's panel fails final admission (ten programs, B.4, digests), or None."""
    manifest = json.loads((task / "panel" / "manifest.json").read_text())
    cands = manifest["candidates"]
    valid = [c for c in cands if c["label"] == "valid"]
    invalid = [c for c in cands if c["label"] == "invalid"]
    if len(cands) != 1 + PANEL_ALTERNATIVES + PANEL_INVALIDS or len(valid) != 1 + PANEL_ALTERNATIVES:
        return f"the panel holds {len(valid)} valid and {len(invalid)} invalid programs, not 5 and 5"
    for cand in [*cands, manifest.get("initial") or {}]:
        if cand and tree_sha256(task / cand["artifact"]) != cand["sha256"]:
            return f"{cand['artifact']}: tree digest does not match the manifest"
    for group in (valid, invalid):
        ok, _low, _mean = criterion.check([ast_features(task / c["artifact"]) for c in group])
        if not ok:
            return "a group misses the B.4 criterion"
    return None


def admission(tasks: dict[str, Path], applicability: dict[str, dict[str, str]],
              criterion: Callable[[str], Diversity]) -> dict[str, str]:
    """Final admission per built task: "admitted" or the reason."""
    out = {}
    for task, folder in tasks.items():
        status = applicability.get(task)
        problem = panel_problem(folder, criterion(task))
        if status is None:
            out[task] = "final admission: applicability not measured"
        elif status["delta_c"] != APPLICABLE or status["entry_coverage"] != APPLICABLE:
            out[task] = f"final admission: ΔC {status['delta_c']}; Entry Coverage {status['entry_coverage']}"
        elif problem:
            out[task] = f"final admission: {problem}"
        else:
            out[task] = "admitted"
    return out


def criterion_of(packs: dict[str, Path]) -> Callable[[str], Diversity]:
    """The B.4 numbers each pack was built with (pack.json; the project's defaults otherwise)."""
    numbers = {}
    for name, pack in packs.items():
        d = _pack_index(pack).get("diversity", {})
        numbers[name] = Diversity(float(d.get("min_pair", 0.02)), float(d.get("min_mean", 0.05)))
    return lambda task: numbers.get(task.split("-", 1)[0], Diversity(0.02, 0.05))


def load_applicability(path: Path) -> dict[str, dict[str, str]]:
    return json.loads(path.read_text()) if path.is_file() else {}


def measure_all(executor: Any, tasks: dict[str, Path], path: Path, log: Callable[[str], None],
                batch: int = 8) -> None:
    """Measure every task without a status, saving after each batch (resumable)."""
    known = load_applicability(path)
    todo = [t for t in tasks if t not in known]
    for start in range(0, len(todo), batch):
        chunk = todo[start:start + batch]
        known.update(zip(chunk, measure_applicability(executor, [tasks[t] for t in chunk])))
        path.write_text(json.dumps(dict(sorted(known.items())), indent=1, ensure_ascii=False) + "\n")
        log(f"applicability: {start + len(chunk)}/{len(todo)} measured")


def split_sizes(usable: int) -> dict[str, int]:
    """The seed's 500 / 100 / 100 when the training pool allows, else the same 5:1:1 shares."""
    if usable >= 700:
        return {"proposal": 500, "development": 100, "release": 100}
    dev = usable // 7
    return {"proposal": usable - 2 * dev, "development": dev, "release": dev}


def exact_sizes(assigned: dict[str, list[str]], sizes: dict[str, int], tasks: list[Any],
                rng: random.Random) -> dict[str, list[str]]:
    """Whole katas overshoot a split's share; bring every split to its size by moving single-task
    units (not katas) out of a split that is too large and into one that is too small (seeded)."""
    single = sorted(t.id for t in tasks if t.group == t.id)
    used = {i for ids in assigned.values() for i in ids}
    spare = [i for i in single if i not in used]
    rng.shuffle(spare)
    out = {k: sorted(v) for k, v in assigned.items()}
    for name, want in sizes.items():
        movable = [i for i in out[name] if i in set(single)]
        rng.shuffle(movable)
        while len(out[name]) > want and movable:
            drop = movable.pop()
            out[name].remove(drop)
            spare.append(drop)
    for name, want in sizes.items():
        while len(out[name]) < want and spare:
            out[name].append(spare.pop(0))
    return {k: sorted(v) for k, v in out.items()}


def task_entries(c: fe.Construction, applicability: dict[str, dict[str, str]], members: set[str]) -> dict[str, dict]:
    out = {}
    for r in sorted(c.records, key=lambda r: r.task):
        if r.task not in members:
            continue
        status = applicability.get(r.task, {"delta_c": "not measured", "entry_coverage": "not measured"})
        out[r.task] = {"source": r.source, "source_id": r.source_id, "context": r.context,
                       "pool": "test" if r.task in c.test else "training",
                       **{s: getattr(r, s) for s in fe.SIGNALS},
                       "applicability": status}
    return out


def build_benchmark(packs: dict[str, Path], data: dict[str, Path], tasks_root: Path, splits_root: Path,
                    docs_page: Path, executor: Any = None, measure_training: bool = False, seed: int = 42,
                    log: Callable[[str], None] = lambda s: None) -> dict:
    """Run the front end over the member packs and write everything the module docstring lists;
    with an executor, measure applicability first for tasks without a status (test pool first)."""
    from testhelix.core import bundled_data
    from testhelix.tasks import splits

    records = pack_records("katas", packs["katas"])
    for source in SOURCES[1:]:
        records += source_records(source, data[source], packs[source])
    pools = fe.construct(records, SOURCES, seed)
    built = {t: f for name in SOURCES for t, f in _task_dirs(packs[name]).items()}
    app_path = tasks_root / "benchmark-applicability.json"
    if executor is not None:
        # Final admission needs the candidate test pool's status; the training pool's is measured
        # only with measure_training (a long run: two coverage runs per task).
        measure_all(executor, {t: built[t] for t in sorted(pools.candidates) if t in built}, app_path, log)
        if measure_training:
            measure_all(executor, {t: built[t] for t in sorted(pools.training) if t in built}, app_path, log)
    applicability = load_applicability(app_path)
    candidates = {t: built[t] for t in pools.candidates if t in built}
    c = fe.construct(records, SOURCES, seed, admission(candidates, applicability, criterion_of(packs)))
    training = sorted(t for t in c.training if t in built)
    members = set(training) | c.test
    doc = {"name": NAME, "seed": seed, "sources": list(SOURCES),
           "rules": {"candidate_share": fe.CANDIDATE_SHARE, "test_share": fe.TEST_SHARE, "quantile": fe.QUANTILE},
           "lower_bounds": c.bounds, "test_quotas": c.quotas,
           "funnel": [{"stage": n, **v} for n, v in fe.funnel_rows(c)],
           "excluded": {t: c.admission[t] for t in sorted(c.admission) if c.admission[t] != "admitted"},
           "duplicates": dict(sorted(c.duplicates.items())),
           "tasks": task_entries(c, applicability, members)}
    manifest = tasks_root / MANIFEST
    manifest.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    by_pack = tuple((name, tuple(sorted(t for t in members if t in _task_dirs(packs[name])))) for name in SOURCES)
    with tempfile.TemporaryDirectory(prefix="benchmark-assemble-") as tmp:
        folder = Path(tmp) / NAME
        bundled_data.assemble_composite(by_pack, manifest, folder, lambda m: packs[m])
        scanned = splits.scan_pack(folder)
        tree = tree_sha256(folder)
        sizes = split_sizes(len(training))
        train_tasks = [t for t in scanned if t.id in set(training)]
        assigned = exact_sizes(splits._stratified(train_tasks, sizes, random.Random(seed), "kata"), sizes,
                               train_tasks, random.Random(f"{seed}:exact"))
        split = splits.SplitFile(pack=NAME, pack_digest=splits.pack_digest(scanned), seed=seed, group_by="kata",
                                 splits={**{k: sorted(v) for k, v in assigned.items()}, "test": sorted(c.test)},
                                 stratify_by="context", test_selection="source quotas (testhelix/pack/construct.py)")
        contexts = splits.coverage(split, folder)
    splits.write_split_file(split, splits_root / f"{NAME}.json")
    entry = bundled_data.BundledPack(NAME, "", "", tree, tuple(sorted(members)),
                               dict(sorted(Counter(t.context for t in scanned).items())), MANIFEST,
                               file_sha256(manifest), seed, by_pack)
    index = tasks_root / bundled_data.MANIFEST
    whole = json.loads(index.read_text())
    whole["packs"][NAME] = entry.to_json()
    index.write_text(json.dumps(whole, indent=2, sort_keys=True) + "\n")
    docs_page.write_text(page(c, split, contexts, doc))
    return {"tasks": len(members), "sizes": {k: len(v) for k, v in split.splits.items()}, "contexts": contexts,
            "funnel": doc["funnel"]}


def page(c: fe.Construction, split: Any, contexts: dict[str, dict[str, int]], doc: dict) -> str:
    """docs/benchmark.md: the funnel (Table 5's shape), the bounds, quotas and splits."""
    bounds = "\n".join(f"| {s} | " + " | ".join(f"{b[k]:g}" for k in fe.SIGNALS) + " |" for s, b in c.bounds.items())
    names = sorted({k for v in contexts.values() for k in v})
    split_rows = "\n".join(f"| {n} | {len(ids)} | " + " | ".join(str(contexts[n].get(k, 0)) for k in names) + " |"
                           for n, ids in split.splits.items())
    statuses = Counter(f"ΔC {t['applicability']['delta_c']}, Entry Coverage {t['applicability']['entry_coverage']}"
                       for t in doc["tasks"].values())
    refusals = Counter(why.split(" (")[0] for why in doc["excluded"].values())
    return f"""# The bundled benchmark `{NAME}`

Written by `testhelix pack construct` (testhelix/pack/construct.py and benchmark.py) from the bundled
packs {", ".join(f"`{s}`" for s in c.sources)}; do not edit by hand. The rules (normalisation, deduplication,
signals, bounds, quotas) are in construct.py's docstring; per task, `tasks/{MANIFEST}` records the source,
source id, pool, signals and the ΔC / Entry Coverage applicability status.

## Funnel (seed 000 Table 5's shape; tasks still in after each stage)

Quota exclusions are tasks left unselected, not failures. Here every task of a member pack was built
with its panel when the pack was built (this project's gate scores the training splits with panels
too); the panel stages are counted for the candidate test pool only, as in the seed.

| stage | {" | ".join(c.sources)} | all |
|---|{"---:|" * (len(c.sources) + 1)}
""" + "".join(f"| {n} | " + " | ".join(str(v[s]) for s in c.sources) + f" | {sum(v.values())} |\n"
              for n, v in fe.funnel_rows(c)) + f"""
## Lower bounds (the {fe.QUANTILE:.0%} quantile of each source's own distribution)

| source | {" | ".join(fe.SIGNALS)} |
|---|---:|---:|---:|
{bounds}

Test quotas (proportional to each source's eligible candidates, at least one each): {c.quotas}.

## Splits (`splits/{NAME}.json`, seed 42, stratified by routing context, a kata's tasks in one split)

| split | tasks | {" | ".join(names)} |
|---|---:|{"---:|" * len(names)}
{split_rows}

## Applicability and exclusions

Applicability status of the benchmark's {len(doc["tasks"])} tasks (measured for the candidate test pool;
`not measured` for a training task unless `--measure all` ran):

""" + "".join(f"- {v} tasks: {k}\n" for k, v in statuses.most_common()) + """
Candidate test tasks not admitted, by reason (each task's reason is in `tasks/benchmark.json`):

""" + "".join(f"- {v}: {k}\n" for k, v in refusals.most_common())
