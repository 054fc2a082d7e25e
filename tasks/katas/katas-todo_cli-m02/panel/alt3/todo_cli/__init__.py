"""todo_cli built around frozen dataclass items; the file holds {"seq": n, "items": [...]}."""
import argparse
import dataclasses
import json
import sys
from pathlib import Path

__all__ = ["main"]


@dataclasses.dataclass(frozen=True)
class Item:
    id: int
    text: str
    priority: str = "normal"
    done: bool = False

    def line(self):
        flag = "[x]" if self.done else "[ ]"
        note = f" ({self.priority})" if self.priority != "normal" else ""
        return f"#{self.id} {flag} {self.text}{note}"


class Problem(Exception):
    """An error with its exit code."""

    def __init__(self, code, text):
        super().__init__(text)
        self.code = code


def load(path):
    if not path.exists():
        return 0, []
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise Problem(3, f"{path}: invalid JSON at line {e.lineno}")
    return doc["seq"], [Item(**raw) for raw in doc["items"]]


def store(path, seq, items):
    doc = {"seq": seq, "items": [dataclasses.asdict(it) for it in items]}
    path.write_text(json.dumps(doc), encoding="utf-8")


def execute(ns):
    path = Path(ns.db)
    seq, items = load(path)
    if ns.action == "add":
        text = " ".join(ns.words).strip()
        if not text:
            raise Problem(2, "nothing to add: text is blank")
        seq += 1
        items.append(Item(seq, text, ns.priority))
        store(path, seq, items)
        return [f"added #{seq}: {text}"]
    if ns.action == "list":
        chosen = [it for it in sorted(items, key=lambda it: it.id)
                  if (ns.all or not it.done) and (ns.priority is None or it.priority == ns.priority)]
        n_done = sum(1 for it in items if it.done)
        return [it.line() for it in chosen] + [f"{len(items) - n_done} open, {n_done} done"]
    matches = [it for it in items if it.id == ns.id]
    if not matches:
        raise Problem(1, f"there is no #{ns.id}")
    target = matches[0]
    rest = [it for it in items if it is not target]
    if ns.action == "done":
        if target.done:
            raise Problem(1, f"#{ns.id} is done already")
        updated = dataclasses.replace(target, done=True)
        store(path, seq, sorted(rest + [updated], key=lambda it: it.id))
        return [f"done #{target.id}: {target.text}"]
    store(path, seq, rest)
    return [f"removed #{target.id}: {target.text}"]


def parse_id(text):
    number = int(text)
    if number < 1:
        raise ValueError(text)
    return number


def main(argv=None):
    parser = argparse.ArgumentParser(prog="todo_cli")
    parser.add_argument("--db", required=True)
    actions = parser.add_subparsers(dest="action", required=True)
    adding = actions.add_parser("add")
    adding.add_argument("words", nargs="+")
    adding.add_argument("--priority", default="normal", choices=("low", "normal", "high"))
    listing = actions.add_parser("list")
    listing.add_argument("--all", action="store_true")
    listing.add_argument("--priority", choices=("low", "normal", "high"))
    for verb in ("done", "remove"):
        actions.add_parser(verb).add_argument("id", type=parse_id)
    try:
        ns = parser.parse_args(argv)
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else 2
    try:
        lines = execute(ns)
    except Problem as problem:
        sys.stderr.write(f"todo_cli: {problem}\n")
        return problem.code
    sys.stdout.write("\n".join(lines) + "\n")
    return 0
