"""`testhelix serve`: any ChatModel behind three real wire protocols, on 127.0.0.1 only.

- `wire.py`   request JSON -> neutral `ModelRequest`, `Completion` -> response JSON, error bodies,
              for OpenAI Chat Completions, OpenAI Responses and Anthropic Messages;
- `request_tags.py` what the served model is told about the caller (role, step, task), read from
              the request text only -- the tags a host passes in-process never cross the wire;
- `faults.py` scripted faults (429 with retry-after, 5xx, 529, stalls, malformed bodies, HTML,
              empty choices, oversized replies, inflated usage, wrong tool arguments);
- `stream.py` the same reply as server-sent events (`"stream": true`), cut from the rendered body;
- `server.py` the threaded HTTP server that ties them together (also /v1/models, count_tokens).

Tests point the real `anthropic` and `openai` SDKs at it by base URL, so the whole provider path
(SDK retries, timeouts, parsing, usage) runs offline. A simulated model served this way is still a
test double: every reply it gives says so in its model id (`sim:...`, which the SDK providers turn
into `Completion.simulated`) and in an `x-testhelix-simulated: true` header.
"""
