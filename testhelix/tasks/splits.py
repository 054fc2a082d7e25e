"""Split files: disjoint proposal / development / release / test task lists of a pack.

`splits/<pack>.json` records the seed, the sizes, the task ids of every split and two digests: one
of the pack's task list (so a pack that changed since is refused) and one of the split file's own
content. Assignment is a seeded shuffle of the sorted task ids (or of whole groups, e.g. katas, so
that no base program is shared between splits) filled in split order.

Stratified (`stratify_by="context"`), the assignment is made per routing context, so that every
split holds every context in about the share of its size: within a context the groups are
shuffled (seeded), each split first gets one group, then each further group goes to the split
furthest below its share. Only when a context has fewer groups than there are splits is one group
divided by task: the first splits (in the order proposal, development, release, test) get whole
groups and the last group is shared by the splits after them -- so the splits a search uses stay
disjoint by group from each other and from the held-out splits (`check` names a divided group).
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from testhelix.core import atomic
from testhelix.core.digest import canonical_json
from testhelix.core.errors import UserError
from testhelix.core.paths import splits_dir
from testhelix.core.readers import read_json, read_toml

SPLIT_NAMES = ("proposal", "development", "release", "test")
PAPER_SIZES = {"proposal": 500, "development": 100, "release": 100, "test": 300}
SMALL_PACK_SHARES = {"proposal": 0.5, "development": 0.15, "release": 0.15, "test": 0.2}


@dataclass(frozen=True)
class PackTask:
    id: str
    group: str
    fingerprint: str
    context: str = "general"


@dataclass(frozen=True)
class SplitFile:
    pack: str
    pack_digest: str
    seed: int
    group_by: str | None
    splits: dict[str, list[str]]
    stratify_by: str | None = None
    test_selection: str | None = None   # how the test split was chosen when not by the stratified deal

    def to_json(self) -> dict:
        body = {"pack": self.pack, "pack_digest": self.pack_digest, "seed": self.seed,
                "group_by": self.group_by, "sizes": {k: len(v) for k, v in self.splits.items()},
                "splits": self.splits}
        if self.stratify_by:       # absent from older files, whose digests stay as they were
            body["stratify_by"] = self.stratify_by
        if self.test_selection:
            body["test_selection"] = self.test_selection
        return {**body, "digest": hashlib.sha256(canonical_json(body).encode()).hexdigest()}

    def ids(self, name: str) -> list[str]:
        if name not in self.splits:
            raise UserError(f"split {name!r} is not in this split file (has {', '.join(self.splits)})")
        return self.splits[name]


def scan_pack(pack_dir: Path) -> list[PackTask]:
    pack_dir = Path(pack_dir)
    if not pack_dir.is_dir():
        raise UserError(f"{pack_dir}: task pack folder does not exist")
    tasks = []
    for toml_path in sorted(pack_dir.glob("*/task.toml")):
        meta = read_toml(toml_path).get("metadata", {})
        if not isinstance(meta, dict):
            raise UserError(f"{toml_path}: [metadata] must be a table, got {type(meta).__name__}")
        task_id = meta.get("id", toml_path.parent.name)
        if not isinstance(task_id, str):
            raise UserError(f"{toml_path}: metadata.id must be a string, got {task_id!r}")
        h = hashlib.sha256()
        for name in ("task.toml", "instruction.md", "panel/manifest.json"):
            f = toml_path.parent / name
            h.update(name.encode() + b"\0" + (f.read_bytes() if f.exists() else b"") + b"\n")
        tasks.append(PackTask(id=task_id, group=str(meta.get("kata", task_id)), fingerprint=h.hexdigest(),
                              context=str(meta.get("context", "general"))))
    if not tasks:
        raise UserError(f"{pack_dir}: no task folders (with task.toml) found")
    return tasks


T = TypeVar("T")  # a task of any kind (PackTask, Task)


def pack_digest(tasks: list[PackTask]) -> str:
    return hashlib.sha256(canonical_json(sorted((t.id, t.fingerprint) for t in tasks)).encode()).hexdigest()


def sample_across_groups(tasks: list[T], limit: int, seed: int, group_of: Callable[[T], object]) -> list[T]:
    """`limit` tasks spread over the groups (katas): the groups in a seeded order, one task of each
    in turn (each group's tasks also in a seeded order), so `--limit 5` is five katas, not five
    mutants of the first. The result keeps the input order."""
    rng = random.Random(f"limit-sample:{seed}")
    groups: dict[str, list] = {}
    for t in tasks:
        groups.setdefault(str(group_of(t)), []).append(t)
    queues = [rng.sample(members, len(members)) for _, members in sorted(groups.items())]
    rng.shuffle(queues)
    chosen: set[int] = set()
    while len(chosen) < min(limit, len(tasks)):
        for queue in queues:
            if queue and len(chosen) < limit:
                chosen.add(id(queue.pop(0)))
    return [t for t in tasks if id(t) in chosen]


def default_sizes(n_tasks: int) -> dict[str, int]:
    if n_tasks >= sum(PAPER_SIZES.values()):
        return dict(PAPER_SIZES)
    sizes = {k: int(n_tasks * share) for k, share in SMALL_PACK_SHARES.items()}
    sizes["proposal"] += n_tasks - sum(sizes.values())
    return sizes


def make_splits(pack_dir: Path, sizes: dict[str, int] | None = None, seed: int = 42,
                group_by: str | None = None, stratify_by: str | None = None) -> SplitFile:
    tasks = scan_pack(pack_dir)
    sizes = sizes or default_sizes(len(tasks))
    for name, size in sizes.items():
        if name not in SPLIT_NAMES:
            raise UserError(f"unknown split {name!r} (splits are {', '.join(SPLIT_NAMES)})")
        if size < 0:
            raise UserError(f"--{name}: size must be >= 0, got {size}")
    if sum(sizes.values()) > len(tasks):
        raise UserError(f"sizes add up to {sum(sizes.values())} but the pack has {len(tasks)} tasks")
    if group_by not in (None, "kata"):
        raise UserError(f"--group-by: unknown grouping {group_by!r} (use kata)")
    if stratify_by not in (None, "context"):
        raise UserError(f"--stratify-by: unknown stratum {stratify_by!r} (use context)")
    rng = random.Random(seed)
    if stratify_by == "context":
        splits = _stratified(tasks, sizes, rng, group_by)
    else:
        splits = _filled(_units(tasks, rng, group_by), sizes)
    return SplitFile(pack=Path(pack_dir).name, pack_digest=pack_digest(tasks), seed=seed, group_by=group_by,
                     splits={k: sorted(v) for k, v in splits.items()}, stratify_by=stratify_by)


def _units(tasks: list[PackTask], rng: random.Random, group_by: str | None) -> list[list[str]]:
    """The shuffled units of assignment: whole groups, or single tasks."""
    if group_by == "kata":
        groups: dict[str, list[str]] = {}
        for t in tasks:
            groups.setdefault(t.group, []).append(t.id)
        order = sorted(groups)
        rng.shuffle(order)
        return [sorted(groups[g]) for g in order]
    ids = sorted(t.id for t in tasks)
    rng.shuffle(ids)
    return [[i] for i in ids]


def _filled(units: list[list[str]], sizes: dict[str, int]) -> dict[str, list[str]]:
    splits: dict[str, list[str]] = {name: [] for name in SPLIT_NAMES if name in sizes}
    names = list(splits)
    slot = 0
    for unit in units:
        # Fill splits in order; a group goes to the first split that still wants tasks.
        while slot < len(names) and len(splits[names[slot]]) >= sizes[names[slot]]:
            slot += 1
        if slot == len(names):
            break
        splits[names[slot]].extend(unit)
    return splits


def _stratified(tasks: list[PackTask], sizes: dict[str, int], rng: random.Random,
                group_by: str | None) -> dict[str, list[str]]:
    names = [n for n in SPLIT_NAMES if sizes.get(n, 0) > 0]
    splits: dict[str, list[str]] = {name: [] for name in SPLIT_NAMES if name in sizes}
    fill_all = sum(sizes[n] for n in names) >= len(tasks)
    for context in sorted({t.context for t in tasks}):
        stratum = [t for t in tasks if t.context == context]
        share = {n: sizes[n] * len(stratum) / len(tasks) for n in names}
        for name, ids in _assign_stratum(_units(stratum, rng, group_by), names, share, fill_all).items():
            splits[name].extend(ids)
    return splits


def _assign_stratum(units: list[list[str]], names: list[str], share: dict[str, float],
                    fill_all: bool) -> dict[str, list[str]]:
    got: dict[str, list[str]] = {n: [] for n in names}
    if len(units) < len(names):        # too few groups: the last one is divided among the splits left
        for name, unit in zip(names, units[:-1]):
            got[name] += unit
        rest = names[max(0, len(units) - 1):]
        for i, task_id in enumerate(units[-1] if units else []):
            name = rest[i] if i < len(rest) else max(rest, key=lambda n: (share[n] - len(got[n]), -rest.index(n)))
            got[name].append(task_id)
        return got
    for name, unit in zip(names, units):  # every split gets the context first
        got[name] += unit
    for unit in units[len(names):]:
        # then each group to the split furthest below its share (all of them when the sizes add up
        # to the pack; else only while a split still wants tasks)
        name = max(names, key=lambda n: (share[n] - len(got[n]), -names.index(n)))
        if not fill_all and share[name] - len(got[name]) <= 0:
            break
        got[name] += unit
    return got


def coverage(split: SplitFile, pack_dir: Path) -> dict[str, dict[str, int]]:
    """Tasks per routing context in each split."""
    context = {t.id: t.context for t in scan_pack(pack_dir)}
    return {name: dict(sorted(Counter(context.get(i, "?") for i in ids).items())) for name, ids in split.splits.items()}


def divided_groups(split: SplitFile, pack_dir: Path) -> dict[str, dict[str, int]]:
    """Groups (katas) whose tasks sit in more than one split: group -> {split: tasks}."""
    group = {t.id: t.group for t in scan_pack(pack_dir)}
    where: dict[str, Counter] = {}
    for name, ids in split.splits.items():
        for i in ids:
            where.setdefault(group.get(i, i), Counter())[name] += 1
    return {g: dict(c) for g, c in sorted(where.items()) if len(c) > 1}


def parse_split_file(data: object, where: str) -> SplitFile:
    if not isinstance(data, dict):
        raise UserError(f"{where}: a split file is a JSON object")
    problems = []
    for key, typ in (("pack", str), ("pack_digest", str), ("seed", int), ("splits", dict)):
        if not isinstance(data.get(key), typ):
            problems.append((key, f"missing or not a {typ.__name__}"))
    if problems:
        raise UserError(f"{where}: malformed split file", problems)
    for name, ids in data["splits"].items():
        if name not in SPLIT_NAMES:
            problems.append((f"splits.{name}", "unknown split name"))
        elif not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            problems.append((f"splits.{name}", "must be a list of task ids"))
    if problems:
        raise UserError(f"{where}: malformed split file", problems)
    return SplitFile(pack=data["pack"], pack_digest=data["pack_digest"], seed=data["seed"],
                     group_by=data.get("group_by"), splits={k: list(v) for k, v in data["splits"].items()},
                     stratify_by=data.get("stratify_by"), test_selection=data.get("test_selection"))


def load_split_file(path: Path) -> SplitFile:
    return parse_split_file(read_json(path), str(path))


def load_checked_split_file(pack: Path, split_file: Path | None, missing_hint: str) -> SplitFile:
    """The split file of `pack` (`split_file`, else splits/<pack folder name>.json), checked against
    the pack; a missing file is a UserError ending in `missing_hint`."""
    path = split_file or splits_dir() / f"{Path(pack).resolve().name}.json"
    if not path.is_file():
        raise UserError(f"{path}: {missing_hint}")
    split = load_split_file(path)
    problems = check_splits(split, pack)
    if problems:
        raise UserError(f"{path}: the split file does not match {pack}", problems)
    return split


def check_splits(split: SplitFile, pack_dir: Path) -> list[tuple[str, str]]:
    """Every problem as (where, message): overlaps, unknown ids, a pack that changed since."""
    tasks = scan_pack(pack_dir)
    known = {t.id for t in tasks}
    problems = []
    seen: dict[str, str] = {}
    for name, ids in split.splits.items():
        if len(set(ids)) != len(ids):
            problems.append((f"splits.{name}", "lists a task twice"))
        for task_id in ids:
            if task_id not in known:
                problems.append((f"splits.{name}", f"unknown task id {task_id!r}"))
            if task_id in seen and seen[task_id] != name:
                problems.append((f"splits.{name}", f"task {task_id!r} is also in {seen[task_id]}"))
            seen[task_id] = name
    if pack_digest(tasks) != split.pack_digest:
        problems.append(("pack_digest", "the pack changed since the splits were made"))
    if split.stratify_by == "context":
        contexts = {t.id: t.context for t in tasks}
        everywhere = set(contexts.values())
        for name, ids in split.splits.items():
            if name == "test" and split.test_selection:
                continue            # chosen by its own rule (e.g. source quotas), not dealt by context
            missing = everywhere - {contexts[i] for i in ids if i in contexts}
            if ids and missing:
                problems.append((f"splits.{name}", f"stratified by context but holds no {', '.join(sorted(missing))} task"))
    return problems


def write_split_file(split: SplitFile, path: Path) -> None:
    atomic.write_text(path, json.dumps(split.to_json(), indent=2) + "\n")  # never a partial split file


def spread_by_context(ids: list[str], context_of: dict[str, str], group_of: dict[str, str] | None = None) -> list[str]:
    """`ids` reordered so that every prefix covers the routing contexts as evenly as it can: round
    robin over the contexts, and within a context round robin over its groups (katas). A preset
    that evaluates only the first N development tasks then still sees every context."""
    def round_robin(queues: list[list[str]]) -> list[str]:
        out: list[str] = []
        while any(queues):
            out += [q.pop(0) for q in queues if q]
        return out

    group_of = group_of or {}
    per_context: dict[str, dict[str, list[str]]] = {}
    for i in ids:
        per_context.setdefault(context_of.get(i, ""), {}).setdefault(group_of.get(i, i), []).append(i)
    return round_robin([round_robin([list(g) for _, g in sorted(groups.items())])
                        for _, groups in sorted(per_context.items())])
