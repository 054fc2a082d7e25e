"""Differential test: the reference agrees with a real redis-server on the shared subset.

The test starts its own redis-server on a free loopback port (no persistence) and is skipped only
when the binary is absent. Each trace is cut before its first TICK (the logical clock has no Redis
counterpart) and replayed on Redis after RESET + FLUSHDB; replies are translated by
gtdd.domains.kvstore.redis_peer (error messages to codes, unordered replies sorted).
"""

from __future__ import annotations

import random

import pytest

from gtdd.domains.base import Trace, first_divergence, TraceResult
from gtdd.domains.kvstore import DOMAIN, run_reference
from gtdd.domains.kvstore.redis_peer import redis_binary, redis_version, replay, reset, shared_prefix, start_redis

pytestmark = [pytest.mark.redis, pytest.mark.skipif(redis_binary() is None,
                                                 reason="redis-server is not installed (apt-get install -y redis-server)")]


@pytest.fixture(scope="module")
def redis_client():
    server = start_redis()
    client = server.client()
    try:
        yield client
    finally:
        client.close()
        server.stop()


def disagreements(client, traces: list[Trace]) -> list[str]:
    out = []
    for trace in traces:
        ops = shared_prefix(trace.ops)
        if not ops:
            continue
        reset(client)
        expected = run_reference(ops)
        got = TraceResult(tuple(replay(client, ops)), None)
        index = first_divergence(expected, got)
        if index is not None:
            out.append(f"{trace.family} {trace.id} op {index} {ops[index]}: reference "
                       f"{expected.replies[index]!r}, redis {got.replies[index]!r}")
    return out


def test_redis_is_the_expected_major_version(redis_client):
    version = redis_version(redis_client)
    assert version != "unknown", "INFO server did not report redis_version"
    major = int(version.split(".")[0])          # numerically: "10" must count as newer than "7"
    assert major >= 7, version


def test_generated_traces_agree_with_redis(redis_client):
    rng = random.Random(2024)
    traces = [DOMAIN.generate(rng, DOMAIN.families[i % 8]) for i in range(400)]
    assert sum(len(shared_prefix(t.ops)) for t in traces) > 5000  # the subset is not trivially small
    assert disagreements(redis_client, traces) == []


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
    ]
    traces = [Trace.of([{"cmd": c[0], "args": c[1:]} for c in case], "keys") for case in cases]
    assert all(DOMAIN.validate(t.ops) == [] for t in traces)
    assert disagreements(redis_client, traces) == []


@pytest.mark.slow
def test_whole_population_agrees_with_redis(redis_client):
    assert disagreements(redis_client, list(DOMAIN.population())) == []
