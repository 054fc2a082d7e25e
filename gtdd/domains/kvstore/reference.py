"""Reference implementation of the kvstore spec (spec.md in this folder). HIDDEN from agents.

Self-contained on purpose: the evaluator writes this file into a sandbox exactly like a candidate
module, so it imports nothing from the project. `Store().execute(cmd, args)` returns the reply as a
JSON value; error replies are {"error": CODE}.
"""

import re

INT_MIN, INT_MAX = -(2 ** 63), 2 ** 63 - 1
MAX_EXPIRE_SECONDS = 9223372036854775  # the largest seconds value whose milliseconds fit in 64 bits
EPOCH_MS = 1_700_000_000_000  # the notional absolute time of logical second 0 (spec section 2)
SCORE_LIMIT = 2 ** 53  # scores are integers that a double holds exactly
IMMEDIATE = frozenset({"MULTI", "EXEC", "DISCARD", "WATCH", "TICK"})  # never queued


class CommandError(Exception):
    def __init__(self, code):
        super().__init__(code)
        self.code = code


class ZSet(dict):
    """member -> integer score; a distinct type so TYPE can tell it from a hash."""


TYPE_NAMES = {str: "string", list: "list", dict: "hash", set: "set", ZSet: "zset"}


def parse_int(text, code="NOTINT"):
    """Canonical decimal of a signed 64-bit integer: "0", or an optional "-" then 1-9 then digits."""
    body = text[1:] if text.startswith("-") else text
    canonical = text == "0" or (body.isascii() and body.isdigit() and body[0] != "0")
    if not canonical or len(text) > 20:
        raise CommandError(code)
    value = int(text)
    if value < INT_MIN or value > INT_MAX:
        raise CommandError(code)
    return value


def parse_score(text):
    value = parse_int(text, "NOTFLOAT")
    if abs(value) > SCORE_LIMIT:
        raise CommandError("NOTFLOAT")
    return value


def parse_bound(text):
    """A ZCOUNT bound: optional "(" (exclusive), then an integer score, "-inf" or "+inf"."""
    exclusive = text.startswith("(")
    body = text[1:] if exclusive else text
    if body in ("-inf", "+inf"):
        return (float(body), exclusive)
    return (parse_score(body), exclusive)


def expiry_fits(now, seconds):
    """The absolute expiry time in milliseconds, EPOCH_MS + 1000 * (now + seconds), fits in 64 bits."""
    return EPOCH_MS + 1000 * (now + seconds) <= INT_MAX


def parse_expire_seconds(text, now):
    seconds = parse_int(text)
    if seconds <= 0 or seconds > MAX_EXPIRE_SECONDS or not expiry_fits(now, seconds):
        raise CommandError("BADEXPIRE")
    return seconds


def clamp_range(start, stop, length):
    """Inclusive index range with negative indexes from the end; None when empty."""
    if start < 0:
        start += length
    if stop < 0:
        stop += length
    start = max(start, 0)
    if start > stop or start >= length:
        return None
    return start, min(stop, length - 1)


def glob_regex(pattern):
    parts = [".*" if ch == "*" else "." if ch == "?" else re.escape(ch) for ch in pattern]
    return re.compile("".join(parts), re.DOTALL)


class Store:
    def __init__(self):
        self.data = {}
        self.expires = {}  # key -> logical time at which the key stops existing
        self.now = 0
        self.in_multi = False
        self.queue = []
        self.exec_aborted = False  # a queue-time error happened inside MULTI
        self.watched = set()
        self.watch_broken = False

    # ---- dispatch -------------------------------------------------------------------------
    def execute(self, cmd, args):
        entry = COMMANDS.get(cmd)
        if entry is None:
            if self.in_multi:
                self.exec_aborted = True
            return {"error": "UNKNOWN"}
        handler, min_args, max_args = entry[1], entry[2], entry[3]
        if len(args) < min_args or (max_args is not None and len(args) > max_args):
            if cmd == "EXEC":  # a rejected EXEC ends any transaction and every watch
                self.end_transaction()
                return {"error": "EXECABORT"}
            if self.in_multi:
                self.exec_aborted = True
            return {"error": "ARITY"}
        if self.in_multi and cmd not in IMMEDIATE:
            self.queue.append((cmd, list(args)))
            return "QUEUED"
        return self.run(handler, args)

    def run(self, handler, args):
        try:
            return handler(self, args)
        except CommandError as exc:
            return {"error": exc.code}

    # ---- helpers ------------------------------------------------------------------------
    def touch(self, key):
        if key in self.watched:
            self.watch_broken = True

    def lookup(self, key, kind):
        value = self.data.get(key)
        if value is not None and type(value) is not kind:
            raise CommandError("WRONGTYPE")
        return value

    def delete(self, key):
        self.data.pop(key, None)
        self.expires.pop(key, None)

    def drop_if_empty(self, key):
        if not self.data[key]:
            self.delete(key)

    def put_string(self, key, value, seconds=None):
        self.data[key] = value
        self.expires.pop(key, None)
        if seconds is not None:
            self.expires[key] = self.now + seconds
        self.touch(key)

    def sorted_zset(self, zset):
        return sorted(zset.items(), key=lambda item: (item[1], item[0]))

    # ---- keys ---------------------------------------------------------------------------
    def cmd_del(self, args):
        removed = 0
        for key in args:
            if key in self.data:
                self.delete(key)
                self.touch(key)
                removed += 1
        return removed

    def cmd_exists(self, args):
        return sum(1 for key in args if key in self.data)

    def cmd_type(self, args):
        value = self.data.get(args[0])
        return "none" if value is None else TYPE_NAMES[type(value)]

    def rename(self, args, only_if_new):
        src, dst = args
        if src not in self.data:
            raise CommandError("NOSUCHKEY")
        if src == dst:
            return 0 if only_if_new else "OK"
        if dst in self.data and only_if_new:
            return 0
        value, deadline = self.data[src], self.expires.get(src)
        self.delete(dst)
        self.data[dst] = value
        if deadline is not None:
            self.expires[dst] = deadline
        self.delete(src)
        self.touch(src)
        self.touch(dst)
        return 1 if only_if_new else "OK"

    def cmd_rename(self, args):
        return self.rename(args, only_if_new=False)

    def cmd_renamenx(self, args):
        return self.rename(args, only_if_new=True)

    def cmd_keys(self, args):
        regex = glob_regex(args[0])
        return sorted(key for key in self.data if regex.fullmatch(key))

    def cmd_dbsize(self, args):
        return len(self.data)

    def cmd_flushdb(self, args):
        for key in list(self.data):
            self.touch(key)
        self.data.clear()
        self.expires.clear()
        return "OK"

    # ---- strings ------------------------------------------------------------------------
    def cmd_set(self, args):
        key, value, options = args[0], args[1], args[2:]
        nx = xx = False
        expire_text = None
        i = 0
        while i < len(options):
            word = options[i].upper()
            if word == "NX" and not xx:
                nx = True
            elif word == "XX" and not nx:
                xx = True
            elif word == "EX" and i + 1 < len(options):  # may repeat: the last one counts
                expire_text = options[i + 1]
                i += 1
            else:
                raise CommandError("SYNTAX")
            i += 1
        seconds = parse_expire_seconds(expire_text, self.now) if expire_text is not None else None
        exists = key in self.data
        if (nx and exists) or (xx and not exists):
            return None
        self.put_string(key, value, seconds)
        return "OK"

    def cmd_get(self, args):
        return self.lookup(args[0], str)

    def cmd_setnx(self, args):
        if args[0] in self.data:
            return 0
        self.put_string(args[0], args[1])
        return 1

    def cmd_mset(self, args):
        if len(args) % 2:
            raise CommandError("ARITY")
        for i in range(0, len(args), 2):
            self.put_string(args[i], args[i + 1])
        return "OK"

    def cmd_mget(self, args):
        return [v if type(v) is str else None for v in (self.data.get(k) for k in args)]

    def add_to_integer(self, key, delta):
        current = self.lookup(key, str)
        value = 0 if current is None else parse_int(current)
        result = value + delta
        if result < INT_MIN or result > INT_MAX:
            raise CommandError("OVERFLOW")
        self.data[key] = str(result)  # keeps any expiry: the key is modified, not replaced
        self.touch(key)
        return result

    def cmd_incr(self, args):
        return self.add_to_integer(args[0], 1)

    def cmd_decr(self, args):
        return self.add_to_integer(args[0], -1)

    def cmd_incrby(self, args):
        delta = parse_int(args[1])
        return self.add_to_integer(args[0], delta)

    def cmd_append(self, args):
        current = self.lookup(args[0], str) or ""
        self.data[args[0]] = current + args[1]
        self.touch(args[0])
        return len(current) + len(args[1])

    def cmd_strlen(self, args):
        return len(self.lookup(args[0], str) or "")

    # ---- lists --------------------------------------------------------------------------
    def push(self, args, at_head):
        items = self.lookup(args[0], list)
        if items is None:
            items = self.data[args[0]] = []
        for element in args[1:]:
            if at_head:
                items.insert(0, element)
            else:
                items.append(element)
        self.touch(args[0])
        return len(items)

    def cmd_lpush(self, args):
        return self.push(args, at_head=True)

    def cmd_rpush(self, args):
        return self.push(args, at_head=False)

    def pop(self, key, at_head):
        items = self.lookup(key, list)
        if items is None:
            return None
        element = items.pop(0 if at_head else -1)
        self.drop_if_empty(key)
        self.touch(key)
        return element

    def cmd_lpop(self, args):
        return self.pop(args[0], at_head=True)

    def cmd_rpop(self, args):
        return self.pop(args[0], at_head=False)

    def cmd_llen(self, args):
        return len(self.lookup(args[0], list) or ())

    def cmd_lrange(self, args):
        start, stop = parse_int(args[1]), parse_int(args[2])
        items = self.lookup(args[0], list) or []
        bounds = clamp_range(start, stop, len(items))
        return [] if bounds is None else items[bounds[0]:bounds[1] + 1]

    def cmd_lindex(self, args):
        items = self.lookup(args[0], list)
        if items is None:
            return None
        index = parse_int(args[1])
        if index < 0:
            index += len(items)
        return items[index] if 0 <= index < len(items) else None

    def cmd_lset(self, args):
        items = self.lookup(args[0], list)
        if items is None:
            raise CommandError("NOSUCHKEY")
        index = parse_int(args[1])
        if index < 0:
            index += len(items)
        if not 0 <= index < len(items):
            raise CommandError("OUTOFRANGE")
        items[index] = args[2]
        self.touch(args[0])
        return "OK"

    def cmd_lrem(self, args):
        count = parse_int(args[1])
        items = self.lookup(args[0], list)
        if items is None:
            return 0
        element, limit = args[2], abs(count) if count else len(items)
        positions = [i for i, v in enumerate(items) if v == element]
        chosen = positions[-limit:] if count < 0 else positions[:limit]
        for i in reversed(chosen):
            del items[i]
        if chosen:
            self.drop_if_empty(args[0])
            self.touch(args[0])
        return len(chosen)

    # ---- hashes -------------------------------------------------------------------------
    def cmd_hset(self, args):
        if len(args) % 2 == 0:
            raise CommandError("ARITY")
        fields = self.lookup(args[0], dict)
        if fields is None:
            fields = self.data[args[0]] = {}
        added = 0
        for i in range(1, len(args), 2):
            added += args[i] not in fields
            fields[args[i]] = args[i + 1]
        self.touch(args[0])
        return added

    def cmd_hget(self, args):
        return (self.lookup(args[0], dict) or {}).get(args[1])

    def cmd_hdel(self, args):
        fields = self.lookup(args[0], dict)
        if fields is None:
            return 0
        removed = 0
        for field in args[1:]:
            if field in fields:
                del fields[field]
                removed += 1
        if removed:
            self.drop_if_empty(args[0])
            self.touch(args[0])
        return removed

    def cmd_hexists(self, args):
        return int(args[1] in (self.lookup(args[0], dict) or {}))

    def cmd_hlen(self, args):
        return len(self.lookup(args[0], dict) or {})

    def cmd_hkeys(self, args):
        return list(self.lookup(args[0], dict) or {})

    def cmd_hgetall(self, args):
        return [x for pair in (self.lookup(args[0], dict) or {}).items() for x in pair]

    def cmd_hincrby(self, args):
        delta = parse_int(args[2])
        fields = self.lookup(args[0], dict)
        current = 0 if fields is None or args[1] not in fields else parse_int(fields[args[1]])
        result = current + delta
        if result < INT_MIN or result > INT_MAX:
            raise CommandError("OVERFLOW")
        if fields is None:
            fields = self.data[args[0]] = {}
        fields[args[1]] = str(result)
        self.touch(args[0])
        return result

    # ---- sets ---------------------------------------------------------------------------
    def cmd_sadd(self, args):
        members = self.lookup(args[0], set)
        if members is None:
            members = self.data[args[0]] = set()
        before = len(members)
        members.update(args[1:])
        if len(members) > before:
            self.touch(args[0])
        return len(members) - before

    def cmd_srem(self, args):
        members = self.lookup(args[0], set)
        if members is None:
            return 0
        before = len(members)
        members.difference_update(args[1:])
        removed = before - len(members)
        if removed:
            self.drop_if_empty(args[0])
            self.touch(args[0])
        return removed

    def cmd_sismember(self, args):
        return int(args[1] in (self.lookup(args[0], set) or ()))

    def cmd_smembers(self, args):
        return sorted(self.lookup(args[0], set) or ())

    def cmd_scard(self, args):
        return len(self.lookup(args[0], set) or ())

    def all_sets(self, keys):
        # Every key is type-checked before any set algebra, so a later wrong-typed key still errors.
        return [self.lookup(key, set) or set() for key in keys]

    def cmd_sinter(self, args):
        sets = self.all_sets(args)
        return sorted(set.intersection(*sets))

    def cmd_sunion(self, args):
        return sorted(set().union(*self.all_sets(args)))

    def cmd_sdiff(self, args):
        sets = self.all_sets(args)
        return sorted(sets[0].difference(*sets[1:]))

    # ---- sorted sets --------------------------------------------------------------------
    def cmd_zadd(self, args):
        pairs = args[1:]
        if len(pairs) % 2:
            raise CommandError("SYNTAX")
        scores = [parse_score(pairs[i]) for i in range(0, len(pairs), 2)]
        zset = self.lookup(args[0], ZSet)
        if zset is None:
            zset = self.data[args[0]] = ZSet()
        added = changed = 0
        for score, member in zip(scores, pairs[1::2]):
            if member not in zset:
                added += 1
            elif zset[member] != score:
                changed += 1
            zset[member] = score
        if added or changed:
            self.touch(args[0])
        return added

    def cmd_zrem(self, args):
        zset = self.lookup(args[0], ZSet)
        if zset is None:
            return 0
        removed = 0
        for member in args[1:]:
            if member in zset:
                del zset[member]
                removed += 1
        if removed:
            self.drop_if_empty(args[0])
            self.touch(args[0])
        return removed

    def cmd_zscore(self, args):
        score = (self.lookup(args[0], ZSet) or {}).get(args[1])
        return None if score is None else str(score)

    def cmd_zincrby(self, args):
        delta = parse_score(args[1])
        zset = self.lookup(args[0], ZSet)
        old = None if zset is None else zset.get(args[2])
        result = (old or 0) + delta
        if abs(result) > SCORE_LIMIT:
            raise CommandError("OVERFLOW")
        if zset is None:
            zset = self.data[args[0]] = ZSet()
        zset[args[2]] = result
        if old != result:
            self.touch(args[0])
        return str(result)

    def cmd_zcard(self, args):
        return len(self.lookup(args[0], ZSet) or ())

    def cmd_zrank(self, args):
        zset = self.lookup(args[0], ZSet)
        if zset is None or args[1] not in zset:
            return None
        return [member for member, _ in self.sorted_zset(zset)].index(args[1])

    def cmd_zrange(self, args):
        with_scores = False
        if len(args) == 4:
            if args[3].upper() != "WITHSCORES":
                raise CommandError("SYNTAX")
            with_scores = True
        start, stop = parse_int(args[1]), parse_int(args[2])
        zset = self.lookup(args[0], ZSet)
        ordered = self.sorted_zset(zset or {})
        bounds = clamp_range(start, stop, len(ordered))
        if bounds is None:
            return []
        chosen = ordered[bounds[0]:bounds[1] + 1]
        if with_scores:
            return [x for member, score in chosen for x in (member, str(score))]
        return [member for member, _ in chosen]

    def cmd_zcount(self, args):
        (low, low_open), (high, high_open) = parse_bound(args[1]), parse_bound(args[2])
        zset = self.lookup(args[0], ZSet) or {}
        return sum(1 for s in zset.values()
                   if (s > low if low_open else s >= low) and (s < high if high_open else s <= high))

    # ---- expiry on the logical clock ----------------------------------------------------
    def cmd_expire(self, args):
        seconds = parse_int(args[1])
        if abs(seconds) > MAX_EXPIRE_SECONDS or not expiry_fits(self.now, seconds):
            raise CommandError("BADEXPIRE")
        key = args[0]
        if key not in self.data:
            return 0
        if seconds <= 0:
            self.delete(key)
        else:
            self.expires[key] = self.now + seconds
        self.touch(key)
        return 1

    def cmd_ttl(self, args):
        if args[0] not in self.data:
            return -2
        deadline = self.expires.get(args[0])
        return -1 if deadline is None else deadline - self.now

    def cmd_persist(self, args):
        if args[0] not in self.data or args[0] not in self.expires:
            return 0
        del self.expires[args[0]]
        self.touch(args[0])
        return 1

    def cmd_setex(self, args):
        seconds = parse_expire_seconds(args[1], self.now)
        self.put_string(args[0], args[2], seconds)
        return "OK"

    def cmd_tick(self, args):
        step = parse_int(args[0])
        if step < 0:
            raise CommandError("NOTINT")
        self.now += step
        for key in [k for k, deadline in self.expires.items() if deadline <= self.now]:
            self.delete(key)
            self.touch(key)
        return self.now

    # ---- transactions -------------------------------------------------------------------
    def cmd_multi(self, args):
        if self.in_multi:
            raise CommandError("NESTED")
        self.in_multi = True
        return "OK"

    def end_transaction(self):
        self.in_multi, self.queue, self.exec_aborted = False, [], False
        self.watched, self.watch_broken = set(), False

    def cmd_exec(self, args):
        if not self.in_multi:
            raise CommandError("NOMULTI")
        queue, aborted, broken = self.queue, self.exec_aborted, self.watch_broken
        self.end_transaction()
        if aborted:
            return {"error": "EXECABORT"}
        if broken:
            return None
        return [self.run(COMMANDS[cmd][1], args) for cmd, args in queue]

    def cmd_discard(self, args):
        if not self.in_multi:
            raise CommandError("NOMULTI")
        self.end_transaction()
        return "OK"

    def cmd_watch(self, args):
        if self.in_multi:
            raise CommandError("WATCHINMULTI")
        self.watched.update(args)
        return "OK"

    def cmd_unwatch(self, args):
        self.watched, self.watch_broken = set(), False
        return "OK"


# name -> (family, handler, minimum argument count, maximum argument count or None)
COMMANDS = {
    "DEL": ("keys", Store.cmd_del, 1, None),
    "EXISTS": ("keys", Store.cmd_exists, 1, None),
    "TYPE": ("keys", Store.cmd_type, 1, 1),
    "RENAME": ("keys", Store.cmd_rename, 2, 2),
    "RENAMENX": ("keys", Store.cmd_renamenx, 2, 2),
    "KEYS": ("keys", Store.cmd_keys, 1, 1),
    "DBSIZE": ("keys", Store.cmd_dbsize, 0, 0),
    "FLUSHDB": ("keys", Store.cmd_flushdb, 0, 0),
    "SET": ("strings", Store.cmd_set, 2, None),
    "GET": ("strings", Store.cmd_get, 1, 1),
    "SETNX": ("strings", Store.cmd_setnx, 2, 2),
    "MSET": ("strings", Store.cmd_mset, 2, None),
    "MGET": ("strings", Store.cmd_mget, 1, None),
    "INCR": ("strings", Store.cmd_incr, 1, 1),
    "DECR": ("strings", Store.cmd_decr, 1, 1),
    "INCRBY": ("strings", Store.cmd_incrby, 2, 2),
    "APPEND": ("strings", Store.cmd_append, 2, 2),
    "STRLEN": ("strings", Store.cmd_strlen, 1, 1),
    "LPUSH": ("lists", Store.cmd_lpush, 2, None),
    "RPUSH": ("lists", Store.cmd_rpush, 2, None),
    "LPOP": ("lists", Store.cmd_lpop, 1, 1),
    "RPOP": ("lists", Store.cmd_rpop, 1, 1),
    "LLEN": ("lists", Store.cmd_llen, 1, 1),
    "LRANGE": ("lists", Store.cmd_lrange, 3, 3),
    "LINDEX": ("lists", Store.cmd_lindex, 2, 2),
    "LSET": ("lists", Store.cmd_lset, 3, 3),
    "LREM": ("lists", Store.cmd_lrem, 3, 3),
    "HSET": ("hashes", Store.cmd_hset, 3, None),
    "HGET": ("hashes", Store.cmd_hget, 2, 2),
    "HDEL": ("hashes", Store.cmd_hdel, 2, None),
    "HEXISTS": ("hashes", Store.cmd_hexists, 2, 2),
    "HLEN": ("hashes", Store.cmd_hlen, 1, 1),
    "HKEYS": ("hashes", Store.cmd_hkeys, 1, 1),
    "HGETALL": ("hashes", Store.cmd_hgetall, 1, 1),
    "HINCRBY": ("hashes", Store.cmd_hincrby, 3, 3),
    "SADD": ("sets", Store.cmd_sadd, 2, None),
    "SREM": ("sets", Store.cmd_srem, 2, None),
    "SISMEMBER": ("sets", Store.cmd_sismember, 2, 2),
    "SMEMBERS": ("sets", Store.cmd_smembers, 1, 1),
    "SCARD": ("sets", Store.cmd_scard, 1, 1),
    "SINTER": ("sets", Store.cmd_sinter, 1, None),
    "SUNION": ("sets", Store.cmd_sunion, 1, None),
    "SDIFF": ("sets", Store.cmd_sdiff, 1, None),
    "ZADD": ("sorted_sets", Store.cmd_zadd, 3, None),
    "ZREM": ("sorted_sets", Store.cmd_zrem, 2, None),
    "ZSCORE": ("sorted_sets", Store.cmd_zscore, 2, 2),
    "ZINCRBY": ("sorted_sets", Store.cmd_zincrby, 3, 3),
    "ZCARD": ("sorted_sets", Store.cmd_zcard, 1, 1),
    "ZRANK": ("sorted_sets", Store.cmd_zrank, 2, 2),
    "ZRANGE": ("sorted_sets", Store.cmd_zrange, 3, 4),
    "ZCOUNT": ("sorted_sets", Store.cmd_zcount, 3, 3),
    "EXPIRE": ("expiry", Store.cmd_expire, 2, 2),
    "TTL": ("expiry", Store.cmd_ttl, 1, 1),
    "PERSIST": ("expiry", Store.cmd_persist, 1, 1),
    "SETEX": ("expiry", Store.cmd_setex, 3, 3),
    "TICK": ("expiry", Store.cmd_tick, 1, 1),
    "MULTI": ("transactions", Store.cmd_multi, 0, 0),
    "EXEC": ("transactions", Store.cmd_exec, 0, 0),
    "DISCARD": ("transactions", Store.cmd_discard, 0, 0),
    "WATCH": ("transactions", Store.cmd_watch, 1, None),
    "UNWATCH": ("transactions", Store.cmd_unwatch, 0, 0),
}
