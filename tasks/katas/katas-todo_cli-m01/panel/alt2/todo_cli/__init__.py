"""todo_cli storing rows [id, text, priority, done] plus a counter; one handler class per command."""
import argparse
import json
import os
import sys

__all__ = ["main"]

LEVELS = ["low", "normal", "high"]


def positive(value):
    if not value.isdigit() or int(value) == 0:
        raise argparse.ArgumentTypeError("ID must be a positive integer")
    return int(value)


class Store:
    def __init__(self, path):
        self.path = path
        self.rows = []
        self.counter = 0
        self.broken = None
        if os.path.exists(path):
            try:
                with open(path, encoding="utf-8") as fh:
                    raw = json.load(fh)
                self.rows = raw["rows"]
                self.counter = raw["counter"]
            except json.JSONDecodeError as err:
                self.broken = str(err)

    def save(self):
        with open(self.path, "w", encoding="utf-8") as fh:
            json.dump({"counter": self.counter, "rows": self.rows}, fh)

    def get(self, ident):
        for row in self.rows:
            if row[0] == ident:
                return row
        return None


def render(row):
    ident, text, prio, done = row
    extra = {"high": " (high)", "low": " (low)"}.get(prio, "")
    return f"#{ident} [{'x' if done else ' '}] {text}{extra}"


def handle(ns, store, out, err):
    if ns.command == "add":
        text = " ".join(ns.words).strip()
        if not text:
            err("todo text may not be empty")
            return 2
        store.counter += 1
        store.rows.append([store.counter, text, ns.priority, False])
        store.save()
        out(f"added #{store.counter}: {text}")
        return 0
    if ns.command == "list":
        for row in sorted(store.rows):
            if row[3] and not ns.all:
                continue
            if ns.priority is not None and row[2] != ns.priority:
                continue
            out(render(row))
        done = len([r for r in store.rows if r[3]])
        out(f"{len(store.rows) - done} open, {done} done")
        return 0
    row = store.get(ns.id)
    if row is None:
        err(f"unknown item {ns.id}")
        return 1
    if ns.command == "done":
        if row[3]:
            err(f"item {ns.id} already completed")
            return 1
        row[3] = True
        store.save()
        out(f"done #{row[0]}: {row[1]}")
        return 0
    store.rows.remove(row)
    store.save()
    out(f"removed #{row[0]}: {row[1]}")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="todo_cli")
    parser.add_argument("--db", required=True)
    commands = parser.add_subparsers(dest="command")
    commands.required = True
    p_add = commands.add_parser("add")
    p_add.add_argument("words", nargs="+")
    p_add.add_argument("--priority", choices=LEVELS, default="normal")
    p_list = commands.add_parser("list")
    p_list.add_argument("--all", action="store_true")
    p_list.add_argument("--priority", choices=LEVELS)
    commands.add_parser("done").add_argument("id", type=positive)
    commands.add_parser("remove").add_argument("id", type=positive)
    try:
        ns = parser.parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2
    store = Store(ns.db)
    if store.broken is not None:
        print(f"todo_cli: database is corrupt ({store.broken})", file=sys.stderr)
        return 3
    return handle(ns, store, print, lambda msg: print(f"todo_cli: {msg}", file=sys.stderr))
