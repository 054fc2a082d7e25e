"""Random kvstore traces of 10-40 operations aimed at one requirement family.

A trace labelled with family F draws most operations from F's commands and the rest from commands
that set up or disturb F's keys (other types on the same keys, deletes, renames), because most spec
rules are about interactions. Pools of keys, fields, members and numbers are small so operations hit
the same keys, and each pool mixes valid values with the malformed ones the spec gives error codes
for.

Arguments stay inside the part of the spec shared with Redis 7.0 (no float scores, no Redis-only
options, no huge expiry values, arity errors only by missing arguments), so the redis differential
test can replay any TICK-free prefix of a generated trace.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from gtdd.domains.base import Op
from gtdd.domains.kvstore.schema import FAMILIES

MIN_LEN, MAX_LEN = 10, 40

KEYS = ("a", "b", "c", "d")
FIELDS = ("f1", "f2", "f3")
MEMBERS = ("x", "y", "z", "w")
VALUES = ("v", "hello", "", "0", "7", "-3", "42", "abc", "9223372036854775807", "-9223372036854775808")
INTS = ("0", "1", "2", "3", "-1", "-2", "5", "10", "-10")
BAD_INTS = ("x", "01", "1.5", "+1", "-0", "", "99999999999999999999")
SCORES = ("0", "1", "2", "3", "-1", "5", "10", "-4")
BAD_SCORES = ("abc", "")
PATTERNS = ("*", "a", "?", "a*", "*b*", "??", "z*", "")
SECONDS = ("1", "2", "3", "5", "10")

Maker = Callable[[random.Random], list[str]]


KEY_WEIGHTS = (4, 3, 2, 1)  # a skew towards the first keys makes operations meet on the same key


def _key(r: random.Random) -> str:
    return r.choices(KEYS, weights=KEY_WEIGHTS)[0]


def _int(r: random.Random) -> str:
    return r.choice(BAD_INTS) if r.random() < 0.08 else r.choice(INTS)


def _score(r: random.Random) -> str:
    return r.choice(BAD_SCORES) if r.random() < 0.06 else r.choice(SCORES)


def _some(r: random.Random, pool: tuple[str, ...], lo: int, hi: int) -> list[str]:
    return [r.choice(pool) for _ in range(r.randint(lo, hi))]


def _set_args(r: random.Random) -> list[str]:
    args = [_key(r), r.choice(VALUES)]
    roll = r.random()
    if roll < 0.15:
        args.append(r.choice(("NX", "nx")))
    elif roll < 0.3:
        args.append(r.choice(("XX", "xx")))
    elif roll < 0.45:
        args += ["EX", r.choice(SECONDS + ("0", "-1", "x"))]
    elif roll < 0.5:
        args += [r.choice(("NX", "XX", "EX", "FOO", "EX 5")), *r.choice(([], ["XX"], ["NX"], ["EX", "3"]))]
    return args


# Each family: (command, weight, argument maker). Weights favour the commands with more rules.
FAMILY_COMMANDS: dict[str, list[tuple[str, int, Maker]]] = {
    "keys": [
        ("DEL", 3, lambda r: _some(r, KEYS, 1, 3)),
        ("EXISTS", 3, lambda r: _some(r, KEYS, 1, 3)),
        ("TYPE", 3, lambda r: [_key(r)]),
        ("RENAME", 2, lambda r: [_key(r), _key(r)]),
        ("RENAMENX", 2, lambda r: [_key(r), _key(r)]),
        ("KEYS", 2, lambda r: [r.choice(PATTERNS)]),
        ("DBSIZE", 2, lambda r: []),
        ("FLUSHDB", 1, lambda r: []),
    ],
    "strings": [
        ("SET", 4, _set_args),
        ("GET", 4, lambda r: [_key(r)]),
        ("SETNX", 2, lambda r: [_key(r), r.choice(VALUES)]),
        ("MSET", 2, lambda r: [x for _ in range(r.randint(1, 3)) for x in (_key(r), r.choice(VALUES))]
         + ([_key(r)] if r.random() < 0.1 else [])),
        ("MGET", 2, lambda r: _some(r, KEYS, 1, 4)),
        ("INCR", 3, lambda r: [_key(r)]),
        ("DECR", 2, lambda r: [_key(r)]),
        ("INCRBY", 3, lambda r: [_key(r), _int(r)]),
        ("APPEND", 2, lambda r: [_key(r), r.choice(VALUES)]),
        ("STRLEN", 2, lambda r: [_key(r)]),
    ],
    "lists": [
        ("LPUSH", 4, lambda r: [_key(r), *_some(r, MEMBERS, 1, 3)]),
        ("RPUSH", 4, lambda r: [_key(r), *_some(r, MEMBERS, 1, 3)]),
        ("LPOP", 2, lambda r: [_key(r)]),
        ("RPOP", 2, lambda r: [_key(r)]),
        ("LLEN", 2, lambda r: [_key(r)]),
        ("LRANGE", 4, lambda r: [_key(r), _int(r), _int(r)]),
        ("LINDEX", 3, lambda r: [_key(r), _int(r)]),
        ("LSET", 3, lambda r: [_key(r), _int(r), r.choice(MEMBERS)]),
        ("LREM", 3, lambda r: [_key(r), _int(r), r.choice(MEMBERS)]),
    ],
    "hashes": [
        ("HSET", 5, lambda r: [_key(r)] + [x for _ in range(r.randint(1, 3))
                                          for x in (r.choice(FIELDS), r.choice(VALUES))]
         + ([r.choice(FIELDS)] if r.random() < 0.1 else [])),
        ("HGET", 3, lambda r: [_key(r), r.choice(FIELDS)]),
        ("HDEL", 3, lambda r: [_key(r), *_some(r, FIELDS, 1, 2)]),
        ("HEXISTS", 2, lambda r: [_key(r), r.choice(FIELDS)]),
        ("HLEN", 2, lambda r: [_key(r)]),
        ("HKEYS", 2, lambda r: [_key(r)]),
        ("HGETALL", 3, lambda r: [_key(r)]),
        ("HINCRBY", 3, lambda r: [_key(r), r.choice(FIELDS), _int(r)]),
    ],
    "sets": [
        ("SADD", 5, lambda r: [_key(r), *_some(r, MEMBERS, 1, 3)]),
        ("SREM", 3, lambda r: [_key(r), *_some(r, MEMBERS, 1, 2)]),
        ("SISMEMBER", 2, lambda r: [_key(r), r.choice(MEMBERS)]),
        ("SMEMBERS", 3, lambda r: [_key(r)]),
        ("SCARD", 2, lambda r: [_key(r)]),
        ("SINTER", 2, lambda r: _some(r, KEYS, 1, 3)),
        ("SUNION", 2, lambda r: _some(r, KEYS, 1, 3)),
        ("SDIFF", 2, lambda r: _some(r, KEYS, 1, 3)),
    ],
    "sorted_sets": [
        ("ZADD", 5, lambda r: [_key(r)] + [x for _ in range(r.randint(1, 3)) for x in (_score(r), r.choice(MEMBERS))]
         + ([_score(r)] if r.random() < 0.06 else [])),
        ("ZREM", 2, lambda r: [_key(r), *_some(r, MEMBERS, 1, 2)]),
        ("ZSCORE", 3, lambda r: [_key(r), r.choice(MEMBERS)]),
        ("ZINCRBY", 3, lambda r: [_key(r), _score(r), r.choice(MEMBERS)]),
        ("ZCARD", 2, lambda r: [_key(r)]),
        ("ZRANK", 3, lambda r: [_key(r), r.choice(MEMBERS)]),
        ("ZRANGE", 4, lambda r: [_key(r), _int(r), _int(r)]
         + ([r.choice(("WITHSCORES", "withscores", "FOO"))] if r.random() < 0.4 else [])),
        ("ZCOUNT", 3, lambda r: [_key(r), _bound(r), _bound(r)]),
    ],
    "expiry": [
        ("EXPIRE", 5, lambda r: [_key(r), r.choice(SECONDS + ("0", "-5", "x"))]),
        ("TTL", 5, lambda r: [_key(r)]),
        ("PERSIST", 2, lambda r: [_key(r)]),
        ("SETEX", 3, lambda r: [_key(r), r.choice(SECONDS + ("0", "x")), r.choice(VALUES)]),
        ("TICK", 4, lambda r: [r.choice(("1", "1", "2", "3", "5", "0", "-1"))]),
    ],
    "transactions": [
        ("WATCH", 2, lambda r: _some(r, KEYS, 1, 2)),
        ("UNWATCH", 1, lambda r: []),
        ("MULTI", 1, lambda r: []),
        ("EXEC", 1, lambda r: []),
        ("DISCARD", 1, lambda r: []),
    ],
}

# Commands that put or disturb values on the keys a family works with.
# Repeating a family in a tuple raises its share.
SUPPORT: dict[str, tuple[str, ...]] = {
    "keys": ("strings", "strings", "lists", "sets", "hashes", "sorted_sets", "expiry"),
    "strings": ("keys", "keys", "lists", "expiry"),
    "lists": ("keys", "keys", "strings"),
    "hashes": ("keys", "keys", "strings"),
    "sets": ("keys", "keys", "strings"),
    "sorted_sets": ("keys", "keys", "sets"),
    "expiry": ("strings", "strings", "lists", "hashes", "keys"),
    "transactions": ("strings", "strings", "lists", "keys", "sets", "expiry"),
}


def _bound(r: random.Random) -> str:
    roll = r.random()
    if roll < 0.15:
        return r.choice(("-inf", "+inf"))
    if roll < 0.2:
        return "abc"  # not "": Redis reads an empty bound as 0 (a listed deviation)
    return ("(" if r.random() < 0.3 else "") + r.choice(SCORES)


def _pick(r: random.Random, family: str, exclude: tuple[str, ...] = ()) -> Op:
    choices = [c for c in FAMILY_COMMANDS[family] if c[0] not in exclude]
    name, _, make = r.choices(choices, weights=[c[1] for c in choices])[0]
    args = make(r)
    if args and r.random() < 0.03:  # a missing argument: ARITY in this spec and in Redis alike
        args = args[: r.randrange(len(args))]
    return {"cmd": name, "args": args}


def _other(r: random.Random, family: str) -> Op:
    """An operation from a supporting family (never a transaction control command)."""
    return _pick(r, r.choice(SUPPORT[family]), exclude=("MULTI", "EXEC", "DISCARD", "WATCH", "UNWATCH"))


def _transaction_block(r: random.Random) -> list[Op]:
    """WATCH, maybe a disturbing write, MULTI, a few commands, then EXEC or DISCARD (sometimes odd)."""
    ops: list[Op] = []
    watched = [_key(r) for _ in range(r.randint(1, 2))]
    if r.random() < 0.6:
        ops.append({"cmd": "WATCH", "args": watched})
    if r.random() < 0.5:  # a write that may touch a watched key
        op = _other(r, "transactions")
        if op["args"] and op["cmd"] != "TICK" and r.random() < 0.7:
            op["args"][0] = r.choice(watched)
        ops.append(op)
        if r.random() < 0.2:
            ops.append({"cmd": "UNWATCH", "args": []})
    ops.append({"cmd": "MULTI", "args": []})
    for _ in range(r.randint(0, 4)):
        roll = r.random()
        if roll < 0.08:
            ops.append({"cmd": r.choice(("MULTI", "WATCH", "UNWATCH")), "args": _some(r, KEYS, 0, 1)})
        elif roll < 0.14:
            ops.append({"cmd": "GET", "args": []})  # rejected when queued: EXECABORT
        else:
            ops.append(_other(r, "transactions"))
    ops.append({"cmd": "DISCARD" if r.random() < 0.15 else "EXEC", "args": []})
    return ops


def _step(r: random.Random, family: str) -> list[Op]:
    if family == "transactions":
        roll = r.random()
        if roll < 0.45:
            return _transaction_block(r)
        return [_pick(r, family)] if roll < 0.6 else [_other(r, family)]
    return [_pick(r, family)] if r.random() < 0.75 else [_other(r, family)]


def generate_ops(r: random.Random, family: str) -> list[Op]:
    if family not in FAMILY_COMMANDS:
        raise ValueError(f"unknown family {family!r}; expected one of {', '.join(FAMILIES)}")
    length = r.randint(MIN_LEN, MAX_LEN)
    ops: list[Op] = []
    while len(ops) < length:
        ops.extend(_step(r, family))
    return ops[:length]
