"""Injectable defects of the kvstore reference: exact text edits, like the kata mutations.

Each defect replaces a `find` text that occurs exactly once in reference.py by `replace`. The
simulated coder of the GTDD loop starts from the reference with some defects applied and repairs
them as counterexamples arrive. tests/gtdd/test_kvstore_defects.py checks that every defect makes at
least one population trace fail and that the reference with no defect fails none.
"""

from __future__ import annotations

from collections.abc import Iterable

from gtdd.domains.base import Defect


def _d(defect_id: str, family: str, description: str, find: str, replace: str) -> Defect:
    return Defect(defect_id, family, description, find, replace)


DEFECTS: tuple[Defect, ...] = (
    # keys
    _d("keys-exists-dedup", "keys", "EXISTS counts a repeated key once",
       "return sum(1 for key in args if key in self.data)",
       "return sum(1 for key in set(args) if key in self.data)"),
    _d("keys-renamenx-self", "keys", "RENAMENX of a key to itself replies 1",
       'return 0 if only_if_new else "OK"', 'return 1 if only_if_new else "OK"'),
    _d("keys-rename-drops-ttl", "keys", "RENAME loses the expiry of the moved key",
       "            self.expires[dst] = deadline\n", "            pass\n"),
    _d("keys-keys-unsorted", "keys", "KEYS replies in insertion order instead of sorted",
       "return sorted(key for key in self.data if regex.fullmatch(key))",
       "return [key for key in self.data if regex.fullmatch(key)]"),
    _d("keys-renamenx-overwrites", "keys", "RENAMENX overwrites an existing destination",
       "if dst in self.data and only_if_new:", "if dst in self.data and only_if_new and dst == src:"),
    _d("keys-question-mark-run", "keys", "KEYS treats ? like *",
       '"." if ch == "?"', '".*" if ch == "?"'),
    # strings
    _d("strings-no-overflow", "strings", "INCR/DECR/INCRBY never report OVERFLOW",
       'raise CommandError("OVERFLOW")\n        self.data[key] = str(result)',
       'pass\n        self.data[key] = str(result)'),
    _d("strings-nx-zero", "strings", "SET NX/XX that does not write replies 0 instead of None",
       "if (nx and exists) or (xx and not exists):\n            return None",
       "if (nx and exists) or (xx and not exists):\n            return 0"),
    _d("strings-append-length", "strings", "APPEND replies the length of the appended part",
       "return len(current) + len(args[1])", "return len(args[1])"),
    _d("strings-leading-zero", "strings", "integers with leading zeros are accepted",
       'body[0] != "0")', "True)"),
    _d("strings-nx-xx-together", "strings", "SET accepts NX and XX together",
       'elif word == "XX" and not nx:', 'elif word == "XX":'),
    _d("strings-incr-missing-one", "strings", "INCR family starts a missing key at 1",
       "value = 0 if current is None else parse_int(current)",
       "value = 1 if current is None else parse_int(current)"),
    # lists
    _d("lists-lpush-order", "lists", "LPUSH with several elements keeps the argument order",
       "for element in args[1:]:\n            if at_head:",
       "for element in (list(reversed(args[1:])) if at_head else args[1:]):\n            if at_head:"),
    _d("lists-lrange-exclusive", "lists", "LRANGE and ZRANGE treat stop as exclusive",
       "items[bounds[0]:bounds[1] + 1]", "items[bounds[0]:bounds[1]]"),
    _d("lists-pop-keeps-empty", "lists", "popping the last element leaves an empty list behind",
       "        self.drop_if_empty(key)\n        self.touch(key)\n        return element",
       "        self.touch(key)\n        return element"),
    _d("lists-lindex-negative", "lists", "LINDEX ignores negative indexes (replies None)",
       "        if index < 0:\n            index += len(items)\n        return items[index]",
       "        return items[index]"),
    _d("lists-lrem-negative", "lists", "LREM with a negative count removes from the head",
       "chosen = positions[-limit:] if count < 0 else positions[:limit]", "chosen = positions[:limit]"),
    _d("lists-lset-missing", "lists", "LSET on a missing key replies OUTOFRANGE",
       'raise CommandError("NOSUCHKEY")\n        index = parse_int(args[1])',
       'raise CommandError("OUTOFRANGE")\n        index = parse_int(args[1])'),
    # hashes
    _d("hashes-hset-counts-all", "hashes", "HSET counts updated fields as new",
       "added += args[i] not in fields", "added += 1"),
    _d("hashes-hgetall-order", "hashes", "HGETALL puts each value before its field",
       "for x in pair]", "for x in reversed(pair)]"),
    _d("hashes-hdel-keeps-empty", "hashes", "HDEL of the last field leaves an empty hash",
       "                del fields[field]\n                removed += 1\n        if removed:\n"
       "            self.drop_if_empty(args[0])\n",
       "                del fields[field]\n                removed += 1\n        if removed:\n"),
    _d("hashes-hincrby-int", "hashes", "HINCRBY stores the number, so HGET replies an integer",
       "fields[args[1]] = str(result)", "fields[args[1]] = result"),
    _d("hashes-hkeys-sorted", "hashes", "HKEYS replies sorted fields instead of hash order",
       "return list(self.lookup(args[0], dict) or {})", "return sorted(self.lookup(args[0], dict) or {})"),
    # sets
    _d("sets-sadd-size", "sets", "SADD replies the set size instead of the number added",
       "return len(members) - before", "return len(members)"),
    _d("sets-smembers-unsorted", "sets", "SMEMBERS replies in hash order",
       "return sorted(self.lookup(args[0], set) or ())", "return list(self.lookup(args[0], set) or ())"),
    _d("sets-algebra-no-typecheck", "sets", "SINTER/SUNION/SDIFF treat a wrong-typed key as empty",
       "return [self.lookup(key, set) or set() for key in keys]",
       "return [self.data[key] if type(self.data.get(key)) is set else set() for key in keys]"),
    _d("sets-sdiff-second-only", "sets", "SDIFF subtracts only the second set",
       "sets[0].difference(*sets[1:])", "sets[0].difference(*sets[1:2])"),
    _d("sets-srem-keeps-empty", "sets", "SREM of the last member leaves an empty set",
       "        removed = before - len(members)\n        if removed:\n            self.drop_if_empty(args[0])\n",
       "        removed = before - len(members)\n        if removed:\n"),
    # sorted sets
    _d("zsets-zadd-counts-updates", "sorted_sets", "ZADD counts members whose score changed as added",
       "if member not in zset:\n                added += 1",
       "if member not in zset or zset[member] != score:\n                added += 1"),
    _d("zsets-ties-insertion", "sorted_sets", "members with equal scores keep insertion order",
       "key=lambda item: (item[1], item[0])", "key=lambda item: item[1]"),
    _d("zsets-withscores-int", "sorted_sets", "ZRANGE WITHSCORES replies scores as integers",
       "for x in (member, str(score))]", "for x in (member, score)]"),
    _d("zsets-zcount-inclusive", "sorted_sets", "ZCOUNT ignores an exclusive lower bound",
       "(s > low if low_open else s >= low)", "s >= low"),
    _d("zsets-zincrby-int", "sorted_sets", "ZINCRBY replies the score as an integer",
       "        return str(result)\n", "        return result\n"),
    _d("zsets-zrank-one-based", "sorted_sets", "ZRANK counts from 1",
       ".index(args[1])", ".index(args[1]) + 1"),
    # expiry
    _d("expiry-ttl-plus-one", "expiry", "TTL replies one second too many",
       "return -1 if deadline is None else deadline - self.now",
       "return -1 if deadline is None else deadline - self.now + 1"),
    _d("expiry-late", "expiry", "a key expires one tick after its expiry time",
       "if deadline <= self.now]", "if deadline < self.now]"),
    _d("expiry-expire-zero", "expiry", "EXPIRE with 0 seconds does not delete the key at once",
       "if seconds <= 0:\n            self.delete(key)", "if seconds < 0:\n            self.delete(key)"),
    _d("expiry-persist-always", "expiry", "PERSIST replies 1 for a key without expiry",
       "if args[0] not in self.data or args[0] not in self.expires:\n            return 0\n"
       "        del self.expires[args[0]]",
       "if args[0] not in self.data:\n            return 0\n        self.expires.pop(args[0], None)"),
    _d("expiry-set-keeps-ttl", "expiry", "SET, SETNX and MSET keep the previous expiry",
       "        self.data[key] = value\n        self.expires.pop(key, None)\n",
       "        self.data[key] = value\n"),
    _d("expiry-zero-seconds", "expiry", "SET EX 0 and SETEX 0 are accepted",
       "if seconds <= 0 or seconds > MAX_EXPIRE_SECONDS or", "if seconds < 0 or seconds > MAX_EXPIRE_SECONDS or"),
    _d("expiry-incr-drops-ttl", "expiry", "INCR/DECR/INCRBY remove the expiry",
       "self.data[key] = str(result)  # keeps any expiry",
       "self.put_string(key, str(result))  # keeps any expiry"),
    # transactions
    _d("tx-watch-empty-list", "transactions", "EXEC replies [] instead of None after a watched change",
       "if broken:\n            return None", "if broken:\n            return []"),
    _d("tx-arity-not-aborting", "transactions", "a command with a wrong argument count does not abort",
       '                self.exec_aborted = True\n            return {"error": "ARITY"}',
       '                pass\n            return {"error": "ARITY"}'),
    _d("tx-unwatch-keeps-dirty", "transactions", "UNWATCH keeps an earlier watched modification",
       'self.watched, self.watch_broken = set(), False\n        return "OK"',
       'self.watched = set()\n        return "OK"'),
    _d("tx-discard-keeps-watch", "transactions", "DISCARD keeps the watched keys",
       'self.end_transaction()\n        return "OK"',
       'self.in_multi, self.queue, self.exec_aborted = False, [], False\n        return "OK"'),
    _d("tx-tick-queued", "transactions", "TICK is queued inside a transaction",
       '"WATCH", "TICK"})', '"WATCH"})'),
    _d("tx-abort-precedence", "transactions", "a watched change is reported before EXECABORT",
       'if aborted:\n            return {"error": "EXECABORT"}\n        if broken:\n            return None',
       'if broken:\n            return None\n        if aborted:\n            return {"error": "EXECABORT"}'),
    _d("tx-del-missing-touches", "transactions", "DEL of a missing key counts as a modification",
       "        for key in args:\n            if key in self.data:\n                self.delete(key)",
       "        for key in args:\n            self.touch(key)\n            if key in self.data:\n"
       "                self.delete(key)"),
)

BY_ID = {d.id: d for d in DEFECTS}


def apply_defects(source: str, ids: Iterable[str]) -> str:
    """The source with each named defect applied in order; each find text must occur exactly once."""
    for defect_id in ids:
        if defect_id not in BY_ID:
            raise KeyError(f"unknown defect {defect_id!r}")
        defect = BY_ID[defect_id]
        count = source.count(defect.find)
        if count != 1:
            raise ValueError(f"defect {defect_id}: find text occurs {count} times (expected exactly 1); "
                             "overlapping defects cannot be combined")
        source = source.replace(defect.find, defect.replace)
    return source
