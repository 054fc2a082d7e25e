"""todo_cli with a dispatch table of plain functions and an in-memory model loaded per call.

The file is a JSON list whose first element is the highest id handed out so far; the remaining
elements are item objects.
"""
import argparse
import json
import os
import sys

__all__ = ["main"]


def _item_id(raw):
    value = int(raw, 10)
    if value > 0:
        return value
    raise argparse.ArgumentTypeError("id has to be 1 or more")


def _args():
    ap = argparse.ArgumentParser(prog="todo_cli")
    ap.add_argument("--db", required=True)
    sp = ap.add_subparsers(dest="verb", required=True)
    add = sp.add_parser("add")
    add.add_argument("--priority", choices=("low", "normal", "high"), default="normal")
    add.add_argument("words", nargs="+")
    show = sp.add_parser("list")
    show.add_argument("--all", action="store_true")
    show.add_argument("--priority", choices=("low", "normal", "high"))
    sp.add_parser("done").add_argument("id", type=_item_id)
    sp.add_parser("remove").add_argument("id", type=_item_id)
    return ap


def _open(db):
    if not os.path.isfile(db):
        return [0]
    with open(db, encoding="utf-8") as fh:
        return json.load(fh)


def _flush(db, model):
    tmp = db + ".tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(model, fh)
    os.replace(tmp, db)


def do_add(ns, model):
    text = " ".join(ns.words).strip()
    if not text:
        return 2, None, "blank item text"
    model[0] += 1
    model.append({"n": model[0], "t": text, "p": ns.priority, "d": False})
    _flush(ns.db, model)
    return 0, f"added #{model[0]}: {text}", None


def do_list(ns, model):
    items = sorted(model[1:], key=lambda it: it["n"])
    shown = []
    for it in items:
        if it["d"] and not ns.all:
            continue
        if ns.priority and it["p"] != ns.priority:
            continue
        shown.append("#%d [%s] %s%s" % (it["n"], "x" if it["d"] else " ", it["t"],
                                         "" if it["p"] == "normal" else " (" + it["p"] + ")"))
    closed = len([it for it in items if it["d"]])
    shown.append("%d open, %d done" % (len(items) - closed, closed))
    return 0, "\n".join(shown), None


def _locate(model, n):
    return next((i for i in range(1, len(model)) if model[i]["n"] == n), None)


def do_done(ns, model):
    i = _locate(model, ns.id)
    if i is None:
        return 1, None, f"item {ns.id} does not exist"
    if model[i]["d"]:
        return 1, None, f"item {ns.id} is finished already"
    model[i]["d"] = True
    _flush(ns.db, model)
    return 0, f"done #{ns.id}: {model[i]['t']}", None


def do_remove(ns, model):
    i = _locate(model, ns.id)
    if i is None:
        return 1, None, f"item {ns.id} does not exist"
    gone = model.pop(i)
    _flush(ns.db, model)
    return 0, f"removed #{ns.id}: {gone['t']}", None


HANDLERS = {"add": do_add, "list": do_list, "done": do_done, "remove": do_remove}


def main(argv=None):
    try:
        ns = _args().parse_args(argv)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 2
    try:
        model = _open(ns.db)
    except json.JSONDecodeError:
        sys.stderr.write(f"todo_cli: {ns.db}: corrupt database\n")
        return 3
    code, out, err = HANDLERS[ns.verb](ns, model)
    if out is not None:
        print(out)
    if err is not None:
        print(f"todo_cli: {err}", file=sys.stderr)
    return code
