"""Replaying kvstore traces on Redis (a real redis-server, or fakeredis) and comparing the shared subset.

Used by the differential test and by bench/kvstore.py. What is compared, and why:

- Only the prefix of a trace before its first `TICK` is sent: the logical clock has no Redis
  counterpart, and without TICK no key expires during a replay (generated expiry times are at least
  one second, a replay takes milliseconds), so TTL values agree too.
- Redis replies are read raw (no redis-py response callbacks) and translated: error messages to the
  spec's codes (ERROR_CODES), and unordered replies (set members, KEYS) sorted, as the spec sorts
  them. Inside a transaction the translation follows the queued commands into the EXEC reply.
- The generator keeps arguments inside the shared part of the spec (see generator.py), so every
  remaining difference is a disagreement between the reference and Redis.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass
from typing import Any, Sequence

from gtdd.domains.base import Op

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


def shared_prefix(ops: Sequence[Op]) -> list[Op]:
    """The operations before the first TICK."""
    out = []
    for op in ops:
        if op["cmd"] == "TICK":
            break
        out.append(op)
    return out


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


def raw_client(client):
    """Drop redis-py's reply post-processing so replies arrive as Redis sent them."""
    client.response_callbacks.clear()
    return client


def replay(client, ops: Sequence[Op]) -> list[Any]:
    """Run ops on a raw single-connection client; the replies in the spec's representation."""
    replies: list[Any] = []
    queued: list[str] | None = None  # command names queued in an open transaction
    for op in ops:
        cmd = op["cmd"]
        try:
            reply = client.execute_command(cmd, *op["args"])
        except Exception as exc:  # noqa: BLE001 - redis-py raises every error reply
            if cmd in ("EXEC", "DISCARD") and queued is not None:
                queued = None
            replies.append(translate_error(exc))
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


def reset(client) -> None:
    """Back to a fresh store and connection state between traces."""
    client.execute_command("RESET")
    client.execute_command("FLUSHDB")


# ----------------------------------------------------------------------------- a private redis-server
@dataclass
class RedisServer:
    process: subprocess.Popen
    port: int
    workdir: str

    def client(self):
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


def redis_version(client) -> str:
    info = client.execute_command("INFO", "server")
    text = info.decode() if isinstance(info, bytes) else str(info)
    for line in text.splitlines():
        if line.startswith("redis_version:"):
            return line.split(":", 1)[1].strip()
    return "unknown"
