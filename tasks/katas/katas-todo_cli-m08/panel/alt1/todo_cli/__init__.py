"""todo_cli: items stored as a JSON object keyed by id strings, with a "last_id" high-water mark."""
import argparse
import json
import pathlib
import sys

__all__ = ["main"]


class _Fail(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def _id(text):
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an id: {text!r}")
    if n <= 0:
        raise argparse.ArgumentTypeError(f"not an id: {text!r}")
    return n


def _build():
    p = argparse.ArgumentParser(prog="todo_cli")
    p.add_argument("--db", required=True)
    cmds = p.add_subparsers(dest="cmd", required=True)
    a = cmds.add_parser("add")
    a.add_argument("words", nargs="+")
    a.add_argument("--priority", choices=["low", "normal", "high"], default="normal")
    l = cmds.add_parser("list")
    l.add_argument("--all", action="store_true")
    l.add_argument("--priority", choices=["low", "normal", "high"], default=None)
    cmds.add_parser("done").add_argument("id", type=_id)
    cmds.add_parser("remove").add_argument("id", type=_id)
    return p


def _read(path):
    if not path.is_file():
        return {"last_id": 0, "todo": {}}
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        raise _Fail(3, f"cannot read {path}: broken JSON")


def _write(path, db):
    path.write_text(json.dumps(db, sort_keys=True), encoding="utf-8")


def _run(ns):
    path = pathlib.Path(ns.db)
    db = _read(path)
    todo = db["todo"]
    if ns.cmd == "add":
        text = " ".join(ns.words).strip()
        if text == "":
            raise _Fail(2, "empty text")
        db["last_id"] += 1
        todo[str(db["last_id"])] = {"text": text, "prio": ns.priority, "done": False}
        _write(path, db)
        return f"added #{db['last_id']}: {text}"
    if ns.cmd == "list":
        lines = []
        for key in sorted(todo, key=int):
            entry = todo[key]
            if (entry["done"] and not ns.all) or (ns.priority not in (None, entry["prio"])):
                continue
            tail = "" if entry["prio"] == "normal" else " (%s)" % entry["prio"]
            lines.append("#%s [%s] %s%s" % (key, "x" if entry["done"] else " ", entry["text"], tail))
        finished = sum(e["done"] for e in todo.values())
        lines.append(f"{len(todo) - finished} open, {finished} done")
        return "\n".join(lines)
    key = str(ns.id)
    if key not in todo:
        raise _Fail(1, f"#{key} not found")
    entry = todo[key]
    if ns.cmd == "done":
        if entry["done"]:
            raise _Fail(1, f"#{key} was done already")
        entry["done"] = True
        _write(path, db)
        return f"done #{key}: {entry['text']}"
    del todo[key]
    _write(path, db)
    return f"removed #{key}: {entry['text']}"


def main(argv=None):
    try:
        ns = _build().parse_args(argv)
    except SystemExit as stop:
        return int(stop.code or 0)
    try:
        print(_run(ns))
    except _Fail as fail:
        print(f"error: {fail}", file=sys.stderr)
        return fail.code
    return 0
