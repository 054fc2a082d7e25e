"""Replaying kvstore traces on Redis (a real redis-server, or fakeredis) and comparing the shared subset.

Used by the differential test and by bench/kvstore.py. What is compared, and why:

- Only the prefix of a trace before its first operation that reaches a documented difference
  (spec.md section 6; `by_design` names it) is sent. `TICK` is one: the logical clock has no Redis
  counterpart, and without TICK no key expires during a replay (expiry times are at least one
  second, a replay takes milliseconds), so TTL values agree too. Another is an expiry whose
  absolute time lies between the 64-bit limits computed from the spec's notional epoch and from
  Redis's real clock (`epoch_window`).
- Redis replies are read raw (no redis-py response callbacks) and translated: error messages to the
  spec's codes (ERROR_CODES), and unordered replies (set members, KEYS) sorted, as the spec sorts
  them. Inside a transaction the translation follows the queued commands into the EXEC reply.
- Commands are pipelined (one round trip per trace); replies are matched to commands in order.
- Every remaining difference is a disagreement between the reference and Redis.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gtdd.domains.base import Op
from gtdd.domains.kvstore.reference import EPOCH_MS, INT_MAX

if TYPE_CHECKING:
    from redis import Redis

# Substrings of Redis 7.0 error messages -> the spec's codes (spec.md, section 3).
ERROR_CODES = (
    ("wrong number of arguments", "ARITY"),
    ("unknown command", "UNKNOWN"),
    ("syntax error", "SYNTAX"),
    ("WRONGTYPE", "WRONGTYPE"),
    ("not an integer", "NOTINT"),
    ("not a valid float", "NOTFLOAT"),
    ("min or max is not a float", "NOTFLOAT"),
    ("would overflow", "OVERFLOW"),
    ("no such key", "NOSUCHKEY"),
    ("index out of range", "OUTOFRANGE"),
    ("invalid expire time", "BADEXPIRE"),
    ("can not be nested", "NESTED"),
    ("without MULTI", "NOMULTI"),
    ("inside MULTI is not allowed", "WATCHINMULTI"),
    ("Transaction discarded", "EXECABORT"),
)
UNORDERED = frozenset({"SMEMBERS", "SINTER", "SUNION", "SDIFF", "KEYS"})


SET_ONLY_IN_REDIS = frozenset({"GET", "KEEPTTL", "PX", "EXAT", "PXAT"})
ZADD_OPTIONS = frozenset({"NX", "XX", "GT", "LT", "CH", "INCR"})
SCORE_LIMIT = 2 ** 53
EPOCH_MARGIN_S = 3600  # the replay's own duration, generously


def epoch_window(now_ms: int) -> tuple[int, int]:
    """Expiry seconds (set at logical second 0) that the reference and a Redis whose clock reads
    now_ms judge differently: between the two 64-bit limits, widened by a margin."""
    ours, theirs = (INT_MAX - EPOCH_MS) // 1000, (INT_MAX - now_ms) // 1000
    return min(ours, theirs) - EPOCH_MARGIN_S, max(ours, theirs) + EPOCH_MARGIN_S


def _int_or_none(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


def _redis_float_only(text: str) -> bool:
    """A score or bound Redis reads as a number and the spec does not (floats, +1, beyond 2^53)."""
    body = text[1:] if text.startswith("(") else text
    if body in ("-inf", "+inf"):
        return False
    if body == "" and text.startswith("("):
        return True  # Redis reads "(" as exclusive 0
    value = _int_or_none(body)
    if value is not None and str(value) == body:
        return abs(value) > SCORE_LIMIT
    try:
        float(body)  # "1.5", "+1", "1e3", "inf", "nan", "-0" ...
        return True
    except ValueError:
        return body == ""


def by_design(op: Op, now_ms: int | None = None) -> str | None:
    """The documented difference (spec.md section 6) an operation reaches, or None."""
    cmd, args = op["cmd"], [str(a) for a in op["args"]]
    upper = [a.upper() for a in args]
    if cmd == "TICK":
        return "logical clock (TICK)"
    if cmd == "SET" and SET_ONLY_IN_REDIS & set(upper[2:]):
        return "SET options"
    if cmd == "EXPIRE" and len(args) > 2:
        return "EXPIRE options"
    if cmd in ("LPOP", "RPOP") and len(args) > 1:
        return "LPOP/RPOP count"
    if cmd == "ZRANGE" and len(args) > 4:
        return "ZRANGE options"
    if cmd == "FLUSHDB" and args:
        return "FLUSHDB mode"
    if cmd == "KEYS" and args and ("[" in args[0] or "\\" in args[0]):
        return "KEYS pattern classes"
    if cmd == "ZADD" and len(args) > 1 and (upper[1] in ZADD_OPTIONS
                                           or any(_redis_float_only(a) for a in args[1::2])):
        return "ZADD options and float scores"
    if cmd == "ZINCRBY" and len(args) > 1 and _redis_float_only(args[1]):
        return "float scores"
    if cmd == "ZCOUNT" and any(_redis_float_only(a) for a in args[1:3]):
        return "float scores"
    if now_ms is not None:
        seconds = None
        if cmd in ("EXPIRE", "SETEX") and len(args) > 1:
            seconds = _int_or_none(args[1])
        elif cmd == "SET" and "EX" in upper[2:]:
            at = upper.index("EX", 2) + 1
            seconds = _int_or_none(args[at]) if at < len(args) else None
        low, high = epoch_window(now_ms)
        if seconds is not None and low <= seconds <= high:
            return "notional epoch"
    return None


def documented_divergence(op: Op, expected: Any) -> str | None:
    """A divergence that depends on state and is documented: ZINCRBY past 2^53 (spec section 6)."""
    if op["cmd"] == "ZINCRBY" and expected == {"error": "OVERFLOW"}:
        return "integer scores (ZINCRBY OVERFLOW)"
    return None


def shared_prefix(ops: Sequence[Op], now_ms: int | None = None) -> tuple[list[Op], str | None]:
    """The operations before the first one that reaches a documented difference, and its name."""
    out: list[Op] = []
    for op in ops:
        reason = by_design(op, now_ms)
        if reason is not None:
            return out, reason
        out.append(op)
    return out, None


def translate_error(exc: BaseException) -> dict:
    text = str(exc)
    if type(exc).__name__ == "ExecAbortError":
        return {"error": "EXECABORT"}
    for needle, code in ERROR_CODES:
        if needle in text:
            return {"error": code}
    return {"error": f"REDIS: {text}"}


def _normalise(cmd: str, reply: Any) -> Any:
    if isinstance(reply, Exception):
        return translate_error(reply)
    if isinstance(reply, bytes):
        return reply.decode()
    if cmd in UNORDERED and isinstance(reply, list):
        return sorted(reply)
    if isinstance(reply, list):
        return [_normalise("", r) for r in reply]
    return reply


def raw_client(client: Redis) -> Redis:
    """Drop redis-py's reply post-processing so replies arrive as Redis sent them."""
    client.response_callbacks.clear()
    return client


def send_all(client: Redis, commands: Sequence[Sequence[str]]) -> list[Any]:
    """Pipeline raw commands on the client's one connection; each reply or the error it raised."""
    conn = client.connection
    if conn is None:  # only a single-connection client pipelines on one connection
        raise ValueError("send_all needs a client made with single_connection_client=True")
    conn.send_packed_command(conn.pack_commands([list(c) for c in commands]))
    out: list[Any] = []
    for _ in commands:
        try:
            out.append(conn.read_response())
        except Exception as exc:
            if type(exc).__name__ in ("ConnectionError", "TimeoutError"):
                raise
            out.append(exc)
    return out


def replay(client: Redis, ops: Sequence[Op], reset_first: bool = False) -> list[Any]:
    """Run ops on a raw single-connection client; the replies in the spec's representation."""
    commands = [[op["cmd"], *op["args"]] for op in ops]
    prefix = [["RESET"], ["FLUSHDB"]] if reset_first else []
    raw = send_all(client, prefix + commands)[len(prefix):]
    replies: list[Any] = []
    queued: list[str] | None = None  # command names queued in an open transaction
    for op, reply in zip(ops, raw):
        cmd = op["cmd"]
        if isinstance(reply, Exception):
            if cmd == "EXEC" or (cmd == "DISCARD" and queued is not None and not op["args"]):
                queued = None
            replies.append(translate_error(reply))
            continue
        if cmd == "MULTI":
            queued = []
        elif queued is not None and reply == "QUEUED":
            queued.append(cmd)
            reply = "QUEUED"
        elif cmd == "EXEC" and queued is not None:
            if isinstance(reply, list):
                reply = [_normalise(name, r) for name, r in zip(queued, reply)]
            queued = None
        elif cmd == "DISCARD":
            queued = None
        replies.append(_normalise(cmd, reply))
    return replies


def reset(client: Redis) -> None:
    """Back to a fresh store and connection state between traces."""
    client.execute_command("RESET")
    client.execute_command("FLUSHDB")


# ----------------------------------------------------------------------------- a private redis-server
@dataclass
class RedisServer:
    process: subprocess.Popen
    port: int
    workdir: str

    def client(self) -> Redis:
        import redis

        return raw_client(redis.Redis(host="127.0.0.1", port=self.port, single_connection_client=True,
                                      decode_responses=True, protocol=2, socket_timeout=10))

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        shutil.rmtree(self.workdir, ignore_errors=True)


def redis_binary() -> str | None:
    return shutil.which("redis-server")


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_redis(binary: str | None = None, attempts: int = 3) -> RedisServer:
    """A redis-server on a free loopback port, without persistence, in a temporary directory."""
    binary = binary or redis_binary()
    if binary is None:
        raise FileNotFoundError("redis-server is not installed")
    last = ""
    for _ in range(attempts):  # the free port can be taken between probing and binding
        port = _free_port()
        workdir = tempfile.mkdtemp(prefix="gtdd-redis-")
        argv = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                "--dir", workdir, "--daemonize", "no", "--protected-mode", "yes", "--logfile", ""]
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=workdir)
        assert proc.stdout is not None  # stdout=PIPE: the log, read below when the server exits early
        server = RedisServer(proc, port, workdir)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    return server
            except OSError:
                time.sleep(0.05)
        last = proc.stdout.read().decode(errors="replace")[-500:] if proc.poll() is not None else "timeout"
        server.stop()
    raise RuntimeError(f"could not start redis-server: {last}")


def redis_version(client: Redis) -> str:
    info = client.execute_command("INFO", "server")
    text = info.decode() if isinstance(info, bytes) else str(info)
    for line in text.splitlines():
        if line.startswith("redis_version:"):
            return line.split(":", 1)[1].strip()
    return "unknown"
