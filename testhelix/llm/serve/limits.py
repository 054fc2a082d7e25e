"""What `testhelix serve` accepts from a client before it parses a request, so that every request
gets an HTTP answer and none can make the server allocate, recurse or wait without bound:

- a body of at most `MAX_BODY_BYTES` (413 beyond; the connection is then closed, the body unread),
- a `Content-Length` that is a non-negative decimal integer (400 otherwise),
- JSON nested at most `MAX_JSON_DEPTH` arrays/objects deep (400 beyond),
- a client that sends nothing for `IDLE_TIMEOUT_S` seconds, or goes away, is dropped quietly.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_BODY_BYTES = 64 * 1024 * 1024   # a request with a million-token context is well below this
MAX_JSON_DEPTH = 256                # chat requests nest a handful of levels; tool schemas a few dozen
IDLE_TIMEOUT_S = 120.0

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(rb"[\[\]{}]")


class RequestRefused(Exception):
    """A request the server answers with `status` and `message` instead of reading it further."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message


def body_length(header: str | None) -> int:
    """The body's length from its Content-Length header (absent: 0), or RequestRefused."""
    if header is None:
        return 0
    text = header.strip()
    if not text.isdigit() or not text.isascii():
        raise RequestRefused(400, f"Content-Length {header[:40]!r} is not a non-negative integer")
    if len(text) > 20 or int(text) > MAX_BODY_BYTES:
        raise RequestRefused(413, f"request body of {text[:40]} bytes is larger than the {MAX_BODY_BYTES} bytes "
                                  "this server accepts")
    return int(text)


def json_depth(raw: bytes) -> int:
    """How deep arrays and objects nest in `raw` (strings skipped), counted up to MAX_JSON_DEPTH + 1."""
    depth = deepest = 0
    for bracket in _BRACKET.findall(_STRING.sub(b'""', raw)):
        depth += 1 if bracket in (b"[", b"{") else -1
        if depth > deepest:
            deepest = depth
            if deepest > MAX_JSON_DEPTH:
                break
    return deepest


def parse_json(raw: bytes, empty: Any) -> Any:
    """The JSON document `raw` (`empty` for no body), or RequestRefused (400) naming what is wrong."""
    if not raw:
        return empty
    if json_depth(raw) > MAX_JSON_DEPTH:
        raise RequestRefused(400, f"JSON nested more than {MAX_JSON_DEPTH} levels deep")
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as err:
        raise RequestRefused(400, f"body is not JSON: {' '.join(str(err).split())[:200]}") from None
