"""The benchmark's construction front end (seed 000's data construction, Table 5): normalise the
tasks of several sources, deduplicate across sources, screen by source-specific lower bounds, form a
training pool and a disjoint candidate test pool by source quotas, and select the final test set
with proportional source quotas (seed 42 within each source, every source retained).

- Normalised text: a program or test tree's .py files parsed and unparsed (`ast.unparse`: no comments,
  no formatting) with docstrings dropped; the tests' text is the sorted set of their `assert`
  statements. Two tasks of different sources are duplicates when their normalised references or
  their normalised tests are equal (the earlier source in the given order keeps its task); within a
  source, when reference, tests and initial program are all equal.
- Signals (the seed's names): `solution_lines` = effective lines (no blank or comment line) of the
  reference's .py files; `test_func_count` = test functions of the trusted tests; `test_coverage_ratio`
  = test_func_count / files the reference changes relative to the initial program (at least 1).
- Lower bounds: per source, the 10th percentile (a value of the source) of each signal, so a source
  of small programs keeps small programs; a task below any of its source's bounds is screened out.
- Quotas: per source, CANDIDATE_SHARE of the screened tasks (whole groups: a kata's mutants share a
  reference and stay together) is the candidate test pool, seeded; the rest is the training pool.
  The final test set is TEST_SHARE of all screened tasks, split over the sources in proportion to
  their candidate pools' eligible tasks (largest remainder, at least one each), sampled with seed 42
  within each source from the candidates that passed panel construction and final admission.
"""

from __future__ import annotations

import ast
import math
import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from testhelix.pack.create import STAGES

CANDIDATE_SHARE = 0.25
TEST_SHARE = 0.15
QUANTILE = 0.10
SIGNALS = ("solution_lines", "test_func_count", "test_coverage_ratio")


@dataclass(frozen=True)
class Record:
    """One source task, normalised."""

    source: str
    task: str
    source_id: str
    group: str
    context: str
    reference: str          # normalised reference text
    tests: str              # normalised test text (sorted assertions)
    initial: str            # normalised initial program ("" when the panel build derives it)
    solution_lines: int
    test_func_count: int
    test_coverage_ratio: float
    panel: str | None = None   # None: admitted by panel construction; else the stage (or "not built")

    def signal(self, name: str) -> float:
        return float(getattr(self, name))


class _NoDocstrings(ast.NodeTransformer):
    def _strip(self, node: ast.AST) -> ast.AST:
        body = getattr(node, "body", None)
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]  # type: ignore[attr-defined]
        self.generic_visit(node)
        return node

    visit_Module = visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _strip


def _py_files(folder: Path) -> list[Path]:
    return sorted(p for p in Path(folder).rglob("*.py") if "__pycache__" not in p.parts)


def normalised_program(folder: Path | None) -> str:
    if folder is None:
        return ""
    parts = []
    for path in _py_files(folder):
        text = path.read_text(encoding="utf-8", errors="replace")
        try:
            text = ast.unparse(_NoDocstrings().visit(ast.parse(text)))
        except SyntaxError:
            text = "\n".join(ln.strip() for ln in text.splitlines() if ln.strip())
        parts.append(f"# {path.relative_to(folder).as_posix()}\n{text}")
    return "\n".join(parts)


def _trees(folder: Path) -> Iterable[ast.Module]:
    for path in _py_files(folder):
        try:
            yield ast.parse(path.read_text(encoding="utf-8", errors="replace"))
        except SyntaxError:
            continue


def normalised_tests(folder: Path) -> str:
    asserts = {ast.unparse(n) for tree in _trees(folder) for n in ast.walk(tree) if isinstance(n, ast.Assert)}
    return "\n".join(sorted(asserts))


def test_func_count(folder: Path) -> int:
    return sum(1 for tree in _trees(folder) for n in ast.walk(tree)
               if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name.startswith("test"))


def solution_lines(folder: Path) -> int:
    return sum(1 for p in _py_files(folder) for ln in p.read_text(encoding="utf-8", errors="replace").splitlines()
               if ln.strip() and not ln.strip().startswith("#"))


def changed_files(initial: Path | None, reference: Path) -> int:
    """Files the reference adds, removes or changes relative to the initial program (1 when the
    initial program is not known yet: the panel build derives it by changing the target file)."""
    if initial is None:
        return 1
    def files(root: Path) -> dict[str, bytes]:
        return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*")
                if p.is_file() and "__pycache__" not in p.parts}
    a, b = files(initial), files(reference)
    return max(1, sum(1 for k in a.keys() | b.keys() if a.get(k) != b.get(k)))


def record(source: str, task: str, source_id: str, group: str, context: str, reference: Path, tests: Path,
           initial: Path | None, panel: str | None) -> Record:
    count = test_func_count(tests)
    return Record(source, task, source_id, group, context, normalised_program(reference), normalised_tests(tests),
                  normalised_program(initial), solution_lines(reference), count,
                  round(count / changed_files(initial, reference), 3), panel)


@dataclass
class Construction:
    """Every stage's outcome, per task (the funnel is counted from it)."""

    records: list[Record]
    sources: list[str]
    duplicates: dict[str, str] = field(default_factory=dict)     # task -> the task it duplicates
    bounds: dict[str, dict[str, float]] = field(default_factory=dict)
    screened_out: set[str] = field(default_factory=set)
    candidates: set[str] = field(default_factory=set)
    training: set[str] = field(default_factory=set)
    admission: dict[str, str] = field(default_factory=dict)      # candidate -> "admitted" or why not
    quotas: dict[str, int] = field(default_factory=dict)
    test: set[str] = field(default_factory=set)


def deduplicate(records: Sequence[Record], sources: Sequence[str]) -> dict[str, str]:
    """task -> the earlier task it duplicates (see the module docstring)."""
    seen_ref: dict[str, Record] = {}
    seen_tests: dict[str, Record] = {}
    seen_whole: dict[tuple[str, str, str, str], str] = {}
    dupes: dict[str, str] = {}
    for rec in sorted(records, key=lambda r: (sources.index(r.source), r.task)):
        whole = (rec.source, rec.reference, rec.tests, rec.initial)
        other = seen_ref.get(rec.reference) or (seen_tests.get(rec.tests) if rec.tests else None)
        if whole in seen_whole:
            dupes[rec.task] = seen_whole[whole]
        elif other is not None and other.source != rec.source:
            dupes[rec.task] = other.task
        else:
            seen_whole[whole] = rec.task
            seen_ref.setdefault(rec.reference, rec)
            if rec.tests:
                seen_tests.setdefault(rec.tests, rec)
    return dupes


def lower_bounds(records: Sequence[Record], quantile: float = QUANTILE) -> dict[str, float]:
    """Each signal's `quantile` of these records (a value that occurs, rounded down)."""
    out = {}
    for name in SIGNALS:
        values = sorted(r.signal(name) for r in records)
        out[name] = values[math.floor(quantile * (len(values) - 1))] if values else 0.0
    return out


def _seeded_groups(records: Sequence[Record], seed: int, salt: str) -> list[list[Record]]:
    groups: dict[str, list[Record]] = {}
    for rec in sorted(records, key=lambda r: r.task):
        groups.setdefault(rec.group, []).append(rec)
    order = sorted(groups)
    random.Random(f"{seed}:{salt}").shuffle(order)
    return [groups[g] for g in order]


def proportional(sizes: dict[str, int], total: int) -> dict[str, int]:
    """`total` split over the keys in proportion to `sizes` (largest remainder; at least one each
    while total allows and the key has any)."""
    whole = sum(sizes.values())
    if not whole:
        return {k: 0 for k in sizes}
    exact = {k: total * n / whole for k, n in sizes.items()}
    got = {k: min(sizes[k], max(1 if sizes[k] else 0, math.floor(v))) for k, v in exact.items()}
    for k in sorted(sizes, key=lambda k: (-(exact[k] - math.floor(exact[k])), k)):
        if sum(got.values()) >= total:
            break
        if got[k] < sizes[k]:
            got[k] += 1
    return got


def construct(records: Sequence[Record], sources: Sequence[str], seed: int = 42,
              admission: dict[str, str] | None = None) -> Construction:
    """Run the front end; `admission` gives, per candidate that passed panel construction, "admitted"
    or why final admission refused it (applicability, digests); missing means admitted."""
    c = Construction(list(records), list(sources))
    c.duplicates = deduplicate(records, sources)
    kept = [r for r in records if r.task not in c.duplicates]
    for source in sources:
        mine = [r for r in kept if r.source == source]
        c.bounds[source] = lower_bounds(mine)
        c.screened_out |= {r.task for r in mine if any(r.signal(s) < c.bounds[source][s] for s in SIGNALS)}
        screened = [r for r in mine if r.task not in c.screened_out]
        want, got = math.floor(CANDIDATE_SHARE * len(screened) + 0.5), 0
        for group in _seeded_groups(screened, seed, f"{source}:candidates"):
            ids = {r.task for r in group}
            if got < want:
                c.candidates |= ids
                got += len(ids)
            else:
                c.training |= ids
    by_task = {r.task: r for r in records}
    for task in sorted(c.candidates):
        rec = by_task[task]
        c.admission[task] = rec.panel or (admission or {}).get(task, "admitted")
    eligible = {s: sorted(t for t in c.candidates if by_task[t].source == s and c.admission[t] == "admitted")
                for s in sources}
    screened_total = sum(1 for r in kept if r.task not in c.screened_out)
    c.quotas = proportional({s: len(v) for s, v in eligible.items()}, math.floor(TEST_SHARE * screened_total + 0.5))
    for source, tasks in eligible.items():
        rng = random.Random(seed)
        c.test |= set(rng.sample(tasks, c.quotas[source]))
    return c


def _member_of(keep: frozenset[str]) -> Callable[[Record], bool]:
    return lambda r: r.task in keep


def funnel_rows(c: Construction) -> list[tuple[str, dict[str, int]]]:
    """Seed 000 Table 5's shape: the tasks of each source still in after each stage."""
    by_source = {s: [r for r in c.records if r.source == s] for s in c.sources}

    def count(pred: Callable[[Record], bool]) -> dict[str, int]:
        return {s: sum(1 for r in recs if pred(r)) for s, recs in by_source.items()}

    cand = c.candidates
    rows = [("source tasks, normalised", count(lambda r: True)),
            ("after cross-source deduplication", count(lambda r: r.task not in c.duplicates)),
            ("after difficulty screening (lower bounds)",
             count(lambda r: r.task not in c.duplicates and r.task not in c.screened_out)),
            ("training pool (source quotas; fixed)", count(lambda r: r.task in c.training)),
            ("training pool with a built panel", count(lambda r: r.task in c.training and r.panel is None)),
            ("candidate test pool (source quotas)", count(lambda r: r.task in cand))]
    left = set(cand)
    for stage in (*STAGES, "not built"):
        left -= {t for t in left if c.admission[t] == stage}
        name = "after panel construction was run" if stage == "not built" else f"after {stage}"
        rows.append((f"  {name}", count(_member_of(frozenset(left)))))
    rows.append(("  after final admission (ΔC + Entry Coverage applicable, digests match)",
                 count(lambda r: r.task in cand and c.admission[r.task] == "admitted")))
    rows.append(("  unselected by the test quota (not a failure)",
                 count(lambda r: r.task in cand and c.admission[r.task] == "admitted" and r.task not in c.test)))
    rows.append(("**final test set**", count(lambda r: r.task in c.test)))
    return rows
