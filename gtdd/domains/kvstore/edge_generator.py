"""An edge-case distribution of kvstore traces, for the Redis differential test.

The ordinary generator (generator.py) keeps to the middle of the argument domain. This one starts
from its traces and pushes every operation towards the boundaries the spec fixes:

- extra arguments on any command (arity errors by excess, option words in the wrong place);
- 64-bit bounds and one past them, increments that overflow, huge list and range indexes;
- huge, boundary and negative expiries (including the 64-bit millisecond limit of section 2);
- empty and punctuation-only keys, fields, members and values;
- one shared key for commands of every type (wrong types everywhere);
- transactions with errors inside: arity errors while queuing, run-time errors in EXEC, nested
  MULTI, WATCH inside MULTI, EXEC and DISCARD with arguments.

It produces valid traces (the schema's limits hold). Some of them reach the documented differences
from Redis (spec section 6); redis_peer.by_design() names those operations so the differential test
stops comparing a trace there instead of silently avoiding the cases.
"""

from __future__ import annotations

import random

from gtdd.domains.base import Op
from gtdd.domains.kvstore import generator
from gtdd.domains.kvstore.schema import MAX_ARGS, MAX_OPS

INT64 = ("9223372036854775807", "-9223372036854775808", "9223372036854775806", "-9223372036854775807",
         "9223372036854775808", "-9223372036854775809", "4611686018427387904", "-1", "0", "1",
         "18446744073709551616", "00", "-", "1e3", " 1", "0x10")
EXPIRIES = ("9223372036854775", "9223372036854776", "-9223372036854775", "-9223372036854776",
            "9000000000000000", "-9000000000000000", "922337203685477", "9223372036854775807",
            "-9223372036854775808", "2147483648", "-1", "0", "1", "100000")
VALUES = ("", " ", "!", "*", "?", "-", "(", "((", "'", '"', "{}", "#", "~", ".", "..", "%s", "\\x", "0",
          "-0", "+1", "9223372036854775807", "-9223372036854775808", "abc", "v" * 64)
KEYS = ("a", "", " ", "*", "?", "!", "-", "a b")
EXTRA = ("x", "", "1", "-1", "0", "!", "a", "NX", "XX", "EX", "10", "WITHSCORES", "*")
SCORES = ("9007199254740992", "-9007199254740992", "9007199254740991", "0", "-0", "1", "-1", "abc", "")
NUMERIC = {"INCRBY": (1,), "LRANGE": (1, 2), "LINDEX": (1,), "LSET": (1,), "LREM": (1,), "HINCRBY": (2,),
           "ZRANGE": (1, 2), "TICK": (0,)}
EXPIRY_ARG = {"EXPIRE": 1, "SETEX": 1}
VALUE_ARG = {"SET": 1, "SETNX": 1, "APPEND": 1, "SETEX": 2, "LSET": 2, "LREM": 2}


def _mutate(r: random.Random, op: Op, shared_key: str) -> Op:
    cmd, args = op["cmd"], list(op["args"])
    if args and cmd not in ("TICK",) and r.random() < 0.3:
        args[0] = shared_key  # one key for every type: wrong types everywhere
    for i in NUMERIC.get(cmd, ()):
        if i < len(args) and r.random() < 0.5:
            args[i] = r.choice(INT64)
    if cmd in EXPIRY_ARG and EXPIRY_ARG[cmd] < len(args) and r.random() < 0.6:
        args[EXPIRY_ARG[cmd]] = r.choice(EXPIRIES)
    if cmd == "SET" and "EX" in args and r.random() < 0.6:
        at = args.index("EX") + 1
        if at < len(args):
            args[at] = r.choice(EXPIRIES)
    if cmd in VALUE_ARG and VALUE_ARG[cmd] < len(args) and r.random() < 0.5:
        args[VALUE_ARG[cmd]] = r.choice(VALUES)
    if cmd in ("ZADD", "ZINCRBY") and len(args) > 1 and r.random() < 0.4:
        args[1] = r.choice(SCORES)
    if cmd in ("HSET", "SADD", "RPUSH", "LPUSH", "MSET") and len(args) > 1 and r.random() < 0.4:
        args[-1] = r.choice(VALUES)
    if r.random() < 0.25:  # extra arguments: too many for fixed arities, option words out of place
        args += [r.choice(EXTRA) for _ in range(r.randint(1, 2))]
    return {"cmd": cmd, "args": args[:MAX_ARGS]}


def _broken_transaction(r: random.Random, shared_key: str) -> list[Op]:
    """MULTI with errors inside: rejected while queuing, failing when run, or control misuse."""
    ops: list[Op] = []
    if r.random() < 0.5:
        ops.append({"cmd": "WATCH", "args": [shared_key]})
        if r.random() < 0.5:
            ops.append({"cmd": "SET", "args": [shared_key, r.choice(VALUES)]})
    ops.append({"cmd": "MULTI", "args": []})
    for _ in range(r.randint(1, 4)):
        roll = r.random()
        if roll < 0.2:
            ops.append({"cmd": "INCR", "args": [shared_key]})  # WRONGTYPE or NOTINT when it runs
        elif roll < 0.3:
            ops.append({"cmd": "LPUSH", "args": [shared_key, "x"]})
        elif roll < 0.4:
            ops.append({"cmd": r.choice(("MULTI", "WATCH", "UNWATCH", "DISCARD")),
                        "args": r.choice(([], [shared_key], ["x", "y"]))})
        elif roll < 0.5:
            ops.append({"cmd": "GET", "args": r.choice(([], ["a", "b"]))})  # rejected when queued
        elif roll < 0.6:
            ops.append({"cmd": "MSET", "args": [shared_key]})  # arity found when run
        else:
            ops.append(_mutate(r, generator._other(r, "transactions"), shared_key))
    ops.append({"cmd": r.choice(("EXEC", "EXEC", "EXEC", "DISCARD")),
                "args": [] if r.random() < 0.8 else [r.choice(EXTRA)]})
    return ops


def generate_edge_ops(r: random.Random, family: str) -> list[Op]:
    """A trace of up to MAX_OPS operations from the edge-case distribution, aimed at `family`."""
    base = generator.generate_ops(r, family)
    shared_key = r.choice(KEYS)
    ops: list[Op] = []
    for op in base:
        if r.random() < 0.12:
            ops.extend(_broken_transaction(r, shared_key))
        ops.append(_mutate(r, op, shared_key))
    return ops[:MAX_OPS]
