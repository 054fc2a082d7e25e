"""argparse front end: each subcommand is a small function returning an exit code."""
import argparse
import json
import os
import sys

PRIORITIES = ("low", "normal", "high")
EXIT_OK, EXIT_MISSING, EXIT_USAGE, EXIT_BAD_DB = 0, 1, 2, 3


class BadDatabase(Exception):
    pass


def _positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"id must be positive: {text}")
    return value


def _parser():
    parser = argparse.ArgumentParser(prog="todo_cli", description="Keep a to-do list in a JSON file.")
    parser.add_argument("--db", required=True, help="path of the JSON file")
    sub = parser.add_subparsers(dest="command", required=True)
    add = sub.add_parser("add", help="add an item")
    add.add_argument("words", nargs="+")
    add.add_argument("--priority", choices=PRIORITIES, default="normal")
    lst = sub.add_parser("list", help="show items")
    lst.add_argument("--all", action="store_true", help="include done items")
    lst.add_argument("--priority", choices=PRIORITIES)
    for name in ("done", "remove"):
        cmd = sub.add_parser(name, help=f"{name} an item")
        cmd.add_argument("id", type=_positive_int)
    return parser


def _load(path):
    if not os.path.exists(path):
        return {"next_id": 1, "items": []}
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except json.JSONDecodeError as exc:
        raise BadDatabase(f"{path} is not valid JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("items"), list):
        raise BadDatabase(f"{path} does not look like a todo_cli database")
    return data


def _save(path, data):
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=2)


def _find(data, item_id):
    for item in data["items"]:
        if item["id"] == item_id:
            return item
    return None


def _line(item):
    mark = "x" if item["done"] else " "
    suffix = "" if item["priority"] == "normal" else f" ({item['priority']})"
    return f"#{item['id']} [{mark}] {item['text']}{suffix}"


def _cmd_add(args, data):
    text = " ".join(args.words).strip()
    if not text:
        print("todo_cli: error: the item text is blank", file=sys.stderr)
        return EXIT_USAGE
    item = {"id": data["next_id"], "text": text, "priority": args.priority, "done": False}
    data["items"].append(item)
    data["next_id"] += 1
    _save(args.db, data)
    print(f"added #{item['id']}: {text}")
    return EXIT_OK


def _cmd_list(args, data):
    for item in sorted(data["items"], key=lambda it: it["id"]):
        if item["done"] and not args.all:
            continue
        if args.priority and item["priority"] != args.priority:
            continue
        print(_line(item))
    open_count = sum(1 for item in data["items"] if not item["done"])
    print(f"{open_count} open, {len(data['items']) - open_count} done")
    return EXIT_OK


def _cmd_done(args, data):
    item = _find(data, args.id)
    if item is None:
        print(f"todo_cli: error: no item #{args.id}", file=sys.stderr)
        return EXIT_MISSING
    if item["done"]:
        print(f"todo_cli: error: item #{args.id} is already done", file=sys.stderr)
        return EXIT_BAD_DB
    item["done"] = True
    _save(args.db, data)
    print(f"done #{item['id']}: {item['text']}")
    return EXIT_OK


def _cmd_remove(args, data):
    item = _find(data, args.id)
    if item is None:
        print(f"todo_cli: error: cannot remove #{args.id}, no such item", file=sys.stderr)
        return EXIT_MISSING
    data["items"].remove(item)
    _save(args.db, data)
    print(f"removed #{item['id']}: {item['text']}")
    return EXIT_OK


COMMANDS = {"add": _cmd_add, "list": _cmd_list, "done": _cmd_done, "remove": _cmd_remove}


def main(argv=None):
    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:
        # argparse exits after printing usage (code 2) or help (code 0); hand the code back.
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    try:
        data = _load(args.db)
    except BadDatabase as exc:
        print(f"todo_cli: error: {exc}", file=sys.stderr)
        return EXIT_BAD_DB
    return COMMANDS[args.command](args, data)
