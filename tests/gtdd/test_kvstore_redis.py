"""Differential test: the reference agrees with a real redis-server on everything they share.

The test starts its own redis-server on a free loopback port (no persistence) and is skipped only
when the binary is absent. Each trace is cut before its first operation that reaches a documented
difference (spec.md section 6; redis_peer.by_design names it: TICK, Redis-only options, float scores,
an expiry between the notional-epoch and real-clock 64-bit limits) and replayed on Redis after
RESET + FLUSHDB; replies are translated by gtdd.domains.kvstore.redis_peer (error messages to codes,
unordered replies sorted). A divergence that only state reveals and that is documented (ZINCRBY
past 2^53) ends the comparison of its trace there and is counted, never hidden.
"""

from __future__ import annotations

import random
import time
from collections import Counter

import pytest

from gtdd.domains.base import Trace, TraceResult, first_divergence
from gtdd.domains.kvstore import DOMAIN, run_reference
from gtdd.domains.kvstore.edge_generator import generate_edge_ops
from gtdd.domains.kvstore.redis_peer import (
    by_design,
    documented_divergence,
    epoch_window,
    redis_binary,
    redis_version,
    replay,
    shared_prefix,
    start_redis,
)
from gtdd.domains.kvstore.reference import EPOCH_MS, INT_MAX

pytestmark = [pytest.mark.redis, pytest.mark.skipif(redis_binary() is None,
                                                 reason="redis-server is not installed (apt-get install -y redis-server)")]
EDGE_TRACES = 10_000


@pytest.fixture(scope="module")
def redis_client():
    server = start_redis()
    client = server.client()
    try:
        yield client
    finally:
        client.close()
        server.stop()


def compare(client, traces: list[Trace]) -> tuple[list[str], Counter]:
    """Disagreements, and counts: traces compared, commands compared, cuts by documented difference."""
    out: list[str] = []
    counts: Counter[str] = Counter()
    for trace in traces:
        ops, reason = shared_prefix(trace.ops, now_ms=int(time.time() * 1000))
        counts[f"cut: {reason}"] += reason is not None
        if not ops:
            continue
        expected = run_reference(ops)
        got = TraceResult(tuple(replay(client, ops, reset_first=True)), None)
        index = first_divergence(expected, got)
        if index is not None and documented_divergence(ops[index], expected.replies[index]):
            counts[f"cut: {documented_divergence(ops[index], expected.replies[index])}"] += 1
            ops = ops[:index]
            index = None
        counts["traces"] += 1
        counts["commands"] += len(ops) if index is None else index + 1
        if index is not None:
            out.append(f"{trace.family} {trace.id} op {index} {ops[index]}: reference "
                       f"{expected.replies[index]!r}, redis {got.replies[index]!r}")
    return out, counts


def test_redis_is_the_expected_major_version(redis_client):
    version = redis_version(redis_client)
    assert version != "unknown", "INFO server did not report redis_version"
    major = int(version.split(".")[0])          # numerically: "10" must count as newer than "7"
    assert major >= 7, version


def test_generated_traces_agree_with_redis(redis_client):
    rng = random.Random(2024)
    traces = [DOMAIN.generate(rng, DOMAIN.families[i % 8]) for i in range(400)]
    found, counts = compare(redis_client, traces)
    assert found == []
    assert counts["commands"] > 5000  # the subset is not trivially small


@pytest.mark.slow
def test_edge_case_traces_agree_with_redis(redis_client):
    rng = random.Random(20261202)
    traces = [Trace.of(generate_edge_ops(rng, DOMAIN.families[i % 8]), DOMAIN.families[i % 8])
              for i in range(EDGE_TRACES)]
    assert all(DOMAIN.validate(t.ops) == [] for t in traces[::50])  # valid inputs (a sample: jsonschema is slow)
    found, counts = compare(redis_client, traces)
    print(f"\nedge-case differential: {EDGE_TRACES} traces generated, {counts['traces']} compared, "
          f"{counts['commands']} commands, {len(found)} disagreements; cut at documented differences: "
          + ", ".join(f"{k[5:]} {v}" for k, v in sorted(counts.items()) if k.startswith("cut: ") and v))
    assert found == [], "\n".join(found[:20])
    assert counts["traces"] > 8000 and counts["commands"] > 150_000


def ops_of(*commands):
    return [{"cmd": c[0], "args": list(c[1:])} for c in commands]


def test_hand_written_edge_cases_agree_with_redis(redis_client):
    cases = [
        [["SET", "k", "v", "nx", "NX"], ["SET", "k", "w", "XX", "EX", "10"], ["TTL", "k"], ["SET", "k", "v", "EX"],
         ["SET", "k", "v", "EX", "5", "EX", "5"], ["SETEX", "k", "0", "v"], ["GET", "k"]],
        [["INCRBY", "n", "9223372036854775807"], ["INCR", "n"], ["DECR", "m"], ["INCRBY", "m", "-0"],
         ["APPEND", "e", ""], ["STRLEN", "e"], ["TYPE", "e"]],
        [["RPUSH", "l", "a", "b", "a", "c", "a"], ["LREM", "l", "-2", "a"], ["LRANGE", "l", "0", "-1"],
         ["LSET", "l", "-1", "z"], ["LSET", "l", "9", "z"], ["LINDEX", "l", "-3"], ["LRANGE", "l", "-100", "100"]],
        [["HSET", "h", "b", "1", "a", "2"], ["HSET", "h", "b", "3"], ["HDEL", "h", "b"], ["HSET", "h", "b", "4"],
         ["HGETALL", "h"], ["HINCRBY", "h", "a", "x"], ["HSET", "h", "c", "x"], ["HINCRBY", "h", "c", "1"]],
        [["SADD", "s", "b", "a"], ["SET", "t", "x"], ["SINTER", "nope", "t"], ["SUNION", "s", "nope"],
         ["SDIFF", "s", "nope", "s"]],
        [["ZADD", "z", "2", "b", "2", "a", "1", "c"], ["ZRANGE", "z", "0", "-1", "withscores"], ["ZRANK", "z", "b"],
         ["ZINCRBY", "z", "-3", "a"], ["ZCOUNT", "z", "(-1", "+inf"], ["ZADD", "z", "1", "a", "2"]],
        [["SET", "a", "1"], ["WATCH", "a"], ["SET", "a", "1"], ["MULTI"], ["GET", "a"], ["EXEC"],
         ["WATCH", "a"], ["MULTI"], ["WATCH", "a"], ["MULTI"], ["GET"], ["EXEC"], ["EXEC"], ["DISCARD"]],
        [["WATCH", "x"], ["DEL", "x"], ["SADD", "s", "m"], ["WATCH", "s"], ["SADD", "s", "m"], ["MULTI"],
         ["UNWATCH"], ["EXEC"], ["RENAME", "s", "s"], ["RENAMENX", "s", "s"], ["KEYS", "?"]],
        # EXEC with arguments closes the transaction and clears every watch, in or out of MULTI
        [["MULTI"], ["EXEC", "x"], ["GET", "k"], ["SET", "k", "1"], ["WATCH", "k"], ["EXEC", "x"], ["SET", "k", "2"],
         ["MULTI"], ["EXEC"], ["MULTI"], ["DISCARD", "x"], ["MULTI", "x"], ["GET", "k"], ["EXEC"]],
        # expiry limits: 64-bit seconds, then 64-bit absolute milliseconds; negative expiries
        [["SET", "k", "v", "EX", "9223372036854775"], ["SET", "k", "v", "EX", "9223372036854776"],
         ["SETEX", "k", "9223372036854775", "v"], ["SET", "k", "v", "EX", "9000000000000000"], ["TTL", "k"],
         ["EXPIRE", "k", "9223372036854775"], ["EXPIRE", "k", "-9223372036854776"], ["EXPIRE", "nokey", "9223372036854775"],
         ["EXPIRE", "k", "-9223372036854775"], ["EXISTS", "k"], ["SET", "k", "v", "EX", "-1"], ["SET", "k", "v", "EX", "0"]],
    ]
    traces = [Trace.of(ops_of(*case), "keys") for case in cases]
    assert all(DOMAIN.validate(t.ops) == [] for t in traces)
    found, counts = compare(redis_client, traces)
    assert found == [] and counts["traces"] == len(cases) and sum(v for k, v in counts.items() if "cut" in k) == 0


def test_the_notional_epoch_window_is_known_and_the_reference_follows_its_own_limit():
    low, high = epoch_window(EPOCH_MS)
    limit = (INT_MAX - EPOCH_MS) // 1000
    assert low < limit < high
    assert by_design({"cmd": "SETEX", "args": ["k", str(limit), "v"]}, now_ms=int(time.time() * 1000))
    assert by_design({"cmd": "SETEX", "args": ["k", "9000000000000000", "v"]}, now_ms=int(time.time() * 1000)) is None
    replies = run_reference(ops_of(["SETEX", "k", str(limit), "v"], ["SETEX", "k", str(limit + 1), "v"],
                                   ["TICK", "1"], ["SETEX", "k", str(limit), "v"], ["EXPIRE", "k", str(limit - 1)])).replies
    assert replies == ("OK", {"error": "BADEXPIRE"}, 1, {"error": "BADEXPIRE"}, 1)


@pytest.mark.slow
def test_whole_population_agrees_with_redis(redis_client):
    found, counts = compare(redis_client, list(DOMAIN.population()))
    assert found == [] and counts["commands"] > 20_000
