"""`testhelix serve` answers every bad request with an HTTP status, through a raw socket on
127.0.0.1 (issue #43): an oversized or malformed Content-Length, a body nested too deep, a client
that goes away mid-request. Afterwards the same server still answers a good request."""

from __future__ import annotations

import json
import socket

import pytest

from testhelix.llm.serve.limits import MAX_BODY_BYTES, MAX_JSON_DEPTH
from testhelix.llm.serve.server import ModelServer

ENDPOINTS = ["/v1/chat/completions", "/v1/responses", "/v1/messages", "/v1/messages/count_tokens",
             "/_testhelix/faults"]


def _exchange(port: int, request: bytes, read: bool = True) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
        conn.sendall(request)
        if not read:
            return b""
        conn.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := conn.recv(65536):
            chunks.append(chunk)
        return b"".join(chunks)


def _post(path: str, body: bytes, length: str | None = None) -> bytes:
    head = f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n"
    head += f"content-length: {len(body) if length is None else length}\r\nconnection: close\r\n\r\n"
    return head.encode() + body


def _status(reply: bytes) -> int:
    assert reply.startswith(b"HTTP/1."), reply[:200]
    return int(reply.split(b" ", 2)[1])


@pytest.fixture(scope="module")
def server():
    with ModelServer("sim:weak") as running:
        yield running


def _still_serves(server: ModelServer) -> None:
    reply = _exchange(server.port, b"GET /v1/models HTTP/1.1\r\nHost: x\r\nconnection: close\r\n\r\n")
    assert _status(reply) == 200 and b"sim:weak" in reply
    body = json.dumps({"messages": [{"role": "user", "content": "hello"}]}).encode()
    assert _status(_exchange(server.port, _post("/v1/messages/count_tokens", body))) == 200


@pytest.mark.parametrize("path", ENDPOINTS)
def test_json_nested_too_deep_is_400_on_every_endpoint(server, path):
    deep = b"[" * 100_000 + b"]" * 100_000
    reply = _exchange(server.port, _post(path, deep))
    assert _status(reply) == 400 and str(MAX_JSON_DEPTH).encode() in reply
    _still_serves(server)


@pytest.mark.parametrize(("length", "status"), [("-5", 400), ("abc", 400), ("1.5", 400), ("", 400),
                                                 ("1000000000000000", 413), (str(MAX_BODY_BYTES + 1), 413),
                                                 ("9" * 400, 413)])
def test_a_bad_content_length_is_answered_without_reading_the_body(server, length, status):
    reply = _exchange(server.port, _post("/v1/chat/completions", b"{}", length=length))
    assert _status(reply) == status, reply[:300]
    _still_serves(server)


def test_a_client_that_goes_away_mid_request_is_dropped_quietly(server, capfd):
    # announces 10 kB, sends 10 bytes, then closes: the handler reads a short body, answers a closed socket
    _exchange(server.port, _post("/v1/chat/completions", b'{"model": ', length="10000"), read=False)
    # asks for a stream and hangs up before reading it
    body = json.dumps({"model": "sim:weak", "stream": True, "messages": [{"role": "user", "content": "hi"}]}).encode()
    _exchange(server.port, _post("/v1/chat/completions", body), read=False)
    _still_serves(server)
    captured = capfd.readouterr()
    assert "Traceback" not in captured.err + captured.out
