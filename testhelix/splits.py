"""Split files: disjoint proposal / development / release / test task lists of a pack.

`splits/<pack>.json` records the seed, the sizes, the task ids of every split and two digests: one
of the pack's task list (so a pack that changed since is refused) and one of the split file's own
content. Assignment is a seeded shuffle of the sorted task ids (or of whole groups, e.g. katas, so
that no base program is shared between splits) filled in split order.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from pathlib import Path

from testhelix.digest import canonical_json
from testhelix.errors import UserError
from testhelix.readers import read_json, read_toml

SPLIT_NAMES = ("proposal", "development", "release", "test")
PAPER_SIZES = {"proposal": 500, "development": 100, "release": 100, "test": 300}
SMALL_PACK_SHARES = {"proposal": 0.5, "development": 0.15, "release": 0.15, "test": 0.2}


@dataclass(frozen=True)
class PackTask:
    id: str
    group: str
    fingerprint: str


@dataclass(frozen=True)
class SplitFile:
    pack: str
    pack_digest: str
    seed: int
    group_by: str | None
    splits: dict[str, list[str]]

    def to_json(self) -> dict:
        body = {"pack": self.pack, "pack_digest": self.pack_digest, "seed": self.seed,
                "group_by": self.group_by, "sizes": {k: len(v) for k, v in self.splits.items()},
                "splits": self.splits}
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
        tasks.append(PackTask(id=task_id, group=str(meta.get("kata", task_id)), fingerprint=h.hexdigest()))
    if not tasks:
        raise UserError(f"{pack_dir}: no task folders (with task.toml) found")
    return tasks


def pack_digest(tasks: list[PackTask]) -> str:
    return hashlib.sha256(canonical_json(sorted((t.id, t.fingerprint) for t in tasks)).encode()).hexdigest()


def sample_across_groups(tasks: list, limit: int, seed: int, group_of) -> list:
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
                group_by: str | None = None) -> SplitFile:
    tasks = scan_pack(pack_dir)
    sizes = sizes or default_sizes(len(tasks))
    for name, size in sizes.items():
        if name not in SPLIT_NAMES:
            raise UserError(f"unknown split {name!r} (splits are {', '.join(SPLIT_NAMES)})")
        if size < 0:
            raise UserError(f"--{name}: size must be >= 0, got {size}")
    if sum(sizes.values()) > len(tasks):
        raise UserError(f"sizes add up to {sum(sizes.values())} but the pack has {len(tasks)} tasks")
    rng = random.Random(seed)
    if group_by == "kata":
        groups: dict[str, list[str]] = {}
        for t in tasks:
            groups.setdefault(t.group, []).append(t.id)
        order = sorted(groups)
        rng.shuffle(order)
        units = [sorted(groups[g]) for g in order]
    elif group_by is None:
        ids = sorted(t.id for t in tasks)
        rng.shuffle(ids)
        units = [[i] for i in ids]
    else:
        raise UserError(f"--group-by: unknown grouping {group_by!r} (use kata)")
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
    return SplitFile(pack=Path(pack_dir).name, pack_digest=pack_digest(tasks), seed=seed,
                     group_by=group_by, splits={k: sorted(v) for k, v in splits.items()})


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
                     group_by=data.get("group_by"), splits={k: list(v) for k, v in data["splits"].items()})


def load_split_file(path: Path) -> SplitFile:
    return parse_split_file(read_json(path), str(path))


def load_checked_split_file(pack: Path, split_file: Path | None, missing_hint: str) -> SplitFile:
    """The split file of `pack` (`split_file`, else splits/<pack folder name>.json), checked against
    the pack; a missing file is a UserError ending in `missing_hint`."""
    from testhelix.paths import splits_dir

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
    return problems


def write_split_file(split: SplitFile, path: Path) -> None:
    from testhelix import atomic

    atomic.write_text(path, json.dumps(split.to_json(), indent=2) + "\n")  # never a partial split file
