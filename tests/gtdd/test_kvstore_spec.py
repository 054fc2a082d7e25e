"""The kvstore spec and the reference agree: every command documented and implemented, same families,
same arity, same error vocabulary; plus the rules that have no Redis counterpart (logical clock)."""

from __future__ import annotations

import re

import pytest

from gtdd.domains import get_domain
from gtdd.domains.kvstore import DOMAIN
from gtdd.domains.kvstore.reference import COMMANDS, Store
from testhelix.core.errors import UserError

ROW = re.compile(r"^\| ([A-Z]+) \| ([a-z_]+) \| ([0-9+\-]+) \|")
ERROR_ROW = re.compile(r"^\| `([A-Z]+)` \|")


def spec_table() -> dict[str, tuple[str, str]]:
    rows = {}
    for line in DOMAIN.spec().splitlines():
        m = ROW.match(line)
        if m:
            assert m.group(1) not in rows, f"{m.group(1)} listed twice"
            rows[m.group(1)] = (m.group(2), m.group(3))
    return rows


def arity_text(low: int, high: int | None) -> str:
    if high is None:
        return f"{low}+"
    return str(low) if low == high else f"{low}-{high}"


def test_spec_table_matches_the_dispatch_table():
    table = spec_table()
    assert len(table) == 61
    assert set(table) == set(COMMANDS)
    for name, (family, arity) in table.items():
        ref_family, handler, low, high = COMMANDS[name]
        assert family == ref_family, name
        assert arity == arity_text(low, high), name
        assert callable(handler)


def test_eight_families_each_documented_and_covered():
    families = {f for f, _ in spec_table().values()}
    assert families == set(DOMAIN.families)
    assert len(DOMAIN.families) == 8
    for family in DOMAIN.families:
        assert f"### {family.replace('_', ' ').capitalize()}" in DOMAIN.spec(), family


def test_every_command_is_described_outside_the_table():
    spec = DOMAIN.spec()
    prose = "\n".join(line for line in spec.splitlines() if not ROW.match(line))
    for name in COMMANDS:
        assert f"`{name}" in prose or f"{name}`" in prose or f"`{name} " in prose, name


def test_error_codes_in_spec_are_the_reference_vocabulary():
    documented = {m.group(1) for line in DOMAIN.spec().splitlines() if (m := ERROR_ROW.match(line))}
    source = DOMAIN.reference_source()
    used = set(re.findall(r'CommandError\("([A-Z]+)"\)', source)) | set(re.findall(r'"error": "([A-Z]+)"', source))
    assert documented == used
    assert len(documented) == 14


def test_get_domain_and_unknown_domain():
    assert get_domain("kvstore") is DOMAIN
    with pytest.raises(UserError, match="unknown domain 'nope'"):
        get_domain("nope")


def run(ops: list[list[str]]) -> list:
    store = Store()
    return [store.execute(op[0], op[1:]) for op in ops]


def test_logical_clock_expiry_and_ttl():
    assert run([["SET", "k", "v", "EX", "3"], ["TTL", "k"], ["TICK", "2"], ["TTL", "k"], ["TICK", "1"],
                ["GET", "k"], ["TTL", "k"], ["EXISTS", "k"]]) == ["OK", 3, 2, 1, 3, None, -2, 0]
    assert run([["RPUSH", "l", "a"], ["EXPIRE", "l", "5"], ["RPUSH", "l", "b"], ["TTL", "l"], ["SET", "l", "x"],
                ["TTL", "l"]]) == [1, 1, 2, 5, "OK", -1]
    assert run([["SET", "k", "1"], ["EXPIRE", "k", "0"], ["EXISTS", "k"], ["TICK", "-1"]]) == [
        "OK", 1, 0, {"error": "NOTINT"}]


def test_watch_sees_expiry_and_tick_is_never_queued():
    assert run([["SET", "k", "1"], ["EXPIRE", "k", "2"], ["WATCH", "k"], ["MULTI"], ["TICK", "2"], ["GET", "k"],
                ["EXEC"]]) == ["OK", 1, "OK", "OK", 2, "QUEUED", None]
    assert run([["WATCH", "k"], ["MULTI"], ["SET", "k", "1"], ["EXEC"], ["GET", "k"]]) == [
        "OK", "OK", "QUEUED", ["OK"], "1"]


def test_check_order_examples():
    # queue-time arity rejects the transaction; run-time parity errors are EXEC elements
    assert run([["MULTI"], ["GET"], ["EXEC"]]) == ["OK", {"error": "ARITY"}, {"error": "EXECABORT"}]
    assert run([["MULTI"], ["MSET", "a", "1", "b"], ["EXEC"]]) == ["OK", "QUEUED", [{"error": "ARITY"}]]
    # INCRBY parses its increment before looking at the key's type
    assert run([["RPUSH", "l", "a"], ["INCRBY", "l", "x"], ["INCRBY", "l", "1"]]) == [
        1, {"error": "NOTINT"}, {"error": "WRONGTYPE"}]
    # LINDEX looks at the key before the index
    assert run([["LINDEX", "missing", "x"]]) == [None]
    assert run([["SET", "k", "v", "NX", "XX"], ["SET", "k", "v", "EX", "0"], ["SET", "k", "v", "EX", "x"]]) == [
        {"error": "SYNTAX"}, {"error": "BADEXPIRE"}, {"error": "NOTINT"}]


def test_replies_are_integers_never_booleans():
    replies = run([["SADD", "s", "a"], ["SISMEMBER", "s", "a"], ["HSET", "h", "f", "v"], ["HEXISTS", "h", "f"]])
    assert replies == [1, 1, 1, 1]
    assert all(type(r) is int for r in replies)


def test_domain_object_provides_the_whole_protocol():
    from gtdd.domains.base import Domain

    members = [n for n in vars(Domain) if not n.startswith("_")] + list(Domain.__annotations__)
    for name in members:
        assert hasattr(DOMAIN, name), name
    assert DOMAIN.module_name == "kvstore.py" and DOMAIN.max_ops == 40
    assert "class Store" in DOMAIN.reference_source()
    assert DOMAIN.family_of_op({"cmd": "ZADD", "args": []}) == "sorted_sets"
