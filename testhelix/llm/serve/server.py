"""The loopback HTTP server behind `testhelix serve` (standard library only, one thread per request).

    with ModelServer("sim:weak", tasks=load_pack(pack)) as server:
        server.url            # http://127.0.0.1:PORT
        # OpenAI SDK:    base_url=server.url + "/v1"   (chat.completions, responses)
        # Anthropic SDK: base_url=server.url           (messages)
        server.faults.replace([Fault("status", code=529, times=3)])

Routes: POST /v1/chat/completions, /v1/responses, /v1/messages (each with `"stream": true` too:
server-sent events, stream.py), /v1/messages/count_tokens (an estimate); GET /v1/models (OpenAI or
Anthropic shape, by the `anthropic-version` header); GET /_testhelix/stats (requests per
protocol, faults served, reasoning items carried back); POST /_testhelix/faults (replace the fault
script with a JSON list). It binds 127.0.0.1 only, whatever it is asked. Every request gets an
answer: bodies, Content-Length and JSON nesting are bounded (limits.py), a failure inside the
server is a 500 with one line, and a client that goes away is dropped without a traceback.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

from testhelix.core.errors import UserError
from testhelix.llm.base import SIMULATED_HEADER, ChatModel, Completion, ModelError, ToolCall, Usage
from testhelix.llm.modelref import ModelRef
from testhelix.llm.registry import create_model, create_optimizer_model, model_ref
from testhelix.llm.serve import wire
from testhelix.llm.serve.faults import Fault, FaultScript, fault_from_dict
from testhelix.llm.serve.limits import IDLE_TIMEOUT_S, RequestRefused, body_length, parse_json
from testhelix.llm.serve.request_tags import TaskIndex, infer_tags
from testhelix.llm.serve.stream import stream_body
from testhelix.llm.sim.model import estimated_input_tokens

if TYPE_CHECKING:
    from testhelix.tasks.task import Task

HOST = "127.0.0.1"
# Every reply of a simulated model carries base.SIMULATED_HEADER, and its model id names the simulated
# model (`sim:...`): the project's providers read the header (callwatch.py), other clients either.
_ROUTES = {"/chat/completions": "chat", "/responses": "responses", "/messages": "messages"}
HTML_PAGE = "<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>"


def default_factory(ref: ModelRef, seed: int) -> Callable[[Any], ChatModel]:
    """Models per task: test doubles play the task the request names (when none is named, the
    task-less double that answers the roles other packages contribute, sim/contributed.py: AutoSaddler's
    optimizer sessions); any other model is built once and serves every request."""
    if not ref.simulated:
        shared = create_model(ref)
        return lambda task: shared
    cache: dict[str, ChatModel] = {}
    lock = threading.Lock()

    def build(task: Task | None) -> ChatModel:
        key = task.id if task is not None else ""
        with lock:
            if key not in cache:
                cache[key] = (create_model(ref, task=task, seed=seed) if task is not None
                              else create_optimizer_model(ref, seed=seed))
            return cache[key]
    return build


class ModelServer:
    def __init__(self, model: ModelRef | str, *, tasks: Sequence[Task] = (), port: int = 0, seed: int = 0,
                 faults: list[Fault] | None = None, api_key: str | None = None,
                 factory: Callable[[Any], ChatModel] | None = None) -> None:
        """`model`: the command's resolved --model, or a name resolved here (a test starting a server)."""
        ref = model if isinstance(model, ModelRef) else model_ref(model)
        self.model_name = ref.given
        self.index = TaskIndex(tasks)
        self.factory = factory or default_factory(ref, seed)
        self.faults = FaultScript(list(faults or ()))
        self.api_key = api_key
        self.stats: dict[str, Any] = {"requests": {p: 0 for p in wire.PROTOCOLS}, "reasoning_items_in": 0,
                                      "bad_requests": 0, "max_tokens_seen": []}
        self._lock = threading.Lock()
        self._httpd = _QuietServer((HOST, port), _handler(self))
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def start(self) -> ModelServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="testhelix-serve", daemon=True)
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._httpd.serve_forever()

    def stop(self) -> None:
        self._httpd.shutdown()
        self.close()

    def close(self) -> None:
        self._httpd.server_close()

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def snapshot(self) -> dict:
        with self._lock:
            return {**json.loads(json.dumps(self.stats)), "faults": self.faults.snapshot()}

    # --- one request -----------------------------------------------------------------------------
    def answer(self, protocol: str, headers: Any, raw: bytes) -> tuple[int, dict[str, str], bytes]:
        """(status, headers, body) for one protocol request."""
        if self.api_key is not None and self.api_key not in (headers.get("x-api-key"),
                                                             (headers.get("authorization") or "")[7:]):
            return _json(401, wire.render_error(protocol, 401, "invalid API key"))
        try:
            body_in = parse_json(raw, {})
            parsed = wire.PARSERS[protocol](body_in)
            streaming = body_in.get("stream") is True
        except RequestRefused as err:
            with self._lock:
                self.stats["bad_requests"] += 1
            return _json(err.status, wire.render_error(protocol, err.status, f"bad request: {err.message}"))
        except (ValueError, KeyError, TypeError, AttributeError) as err:
            with self._lock:
                self.stats["bad_requests"] += 1
            return _json(400, wire.render_error(protocol, 400, f"bad request: {err}"))
        with self._lock:
            self.stats["requests"][protocol] += 1
            self.stats["reasoning_items_in"] += parsed.reasoning_items_in
            self.stats["max_tokens_seen"] = (self.stats["max_tokens_seen"] + [parsed.request.max_output_tokens])[-50:]
        fault = self.faults.next()
        early = _early_fault(protocol, fault)
        if early is not None:
            return early
        request = replace(parsed.request, tags=infer_tags(parsed.request.messages))
        try:
            completion = self.factory(self.index.find(request.messages)).complete(request)
        except (ModelError, UserError) as err:
            status = getattr(err, "status", None) or 500
            return _json(status, wire.render_error(protocol, status, f"served model failed: {err}"))
        completion, usage = _late_fault(fault, completion)
        model = completion.model
        if protocol == "chat":
            body = wire.render_chat(completion, model, usage, empty_choices=fault is not None and fault.kind == "empty")
        elif protocol == "responses":
            body = wire.render_responses(completion, model, usage)
            if fault is not None and fault.kind == "empty":
                body["output"] = []
        else:
            body = wire.render_messages(completion, model, usage)
            if fault is not None and fault.kind == "empty":
                body["content"] = []
            if usage is None:
                del body["usage"]
        headers = {"content-type": "application/json"}
        if completion.simulated:
            headers[SIMULATED_HEADER] = "true"
        if streaming:
            include_usage = bool((body_in.get("stream_options") or {}).get("include_usage"))
            data = stream_body(protocol, body, include_usage=include_usage)
            headers["content-type"] = "text/event-stream"
        else:
            data = json.dumps(body).encode()
        if fault is not None and fault.kind == "malformed":
            data = data[: max(1, len(data) // 2)]
        return 200, headers, data

    def count_tokens(self, raw: bytes) -> tuple[int, dict[str, str], bytes]:
        """Anthropic `count_tokens`: an ESTIMATE (characters / 4 + 1, the rule the simulated models
        charge by), not a real tokenizer's count; the reply says so in `estimate`."""
        try:
            request = wire.parse_messages({"max_tokens": 1, **parse_json(raw, {})}).request
        except RequestRefused as err:
            return _json(err.status, wire.render_error("messages", err.status, f"bad request: {err.message}"))
        except (ValueError, KeyError, TypeError, AttributeError) as err:
            return _json(400, wire.render_error("messages", 400, f"bad request: {err}"))
        return _json(200, {"input_tokens": estimated_input_tokens(request),
                           "estimate": "characters / 4 + 1; not a tokenizer count"})

    def models(self, anthropic_style: bool, path: str) -> tuple[int, dict[str, str], bytes]:
        """`GET /v1/models` (and `/v1/models/ID`) in the caller's dialect: the served model only."""
        name = self.model_name
        if anthropic_style:
            entry: dict[str, Any] = {"type": "model", "id": name, "display_name": name,
                                     "created_at": "1970-01-01T00:00:00Z"}
            listing: dict[str, Any] = {"data": [entry], "has_more": False, "first_id": name, "last_id": name}
        else:
            entry = {"id": name, "object": "model", "created": 0, "owned_by": "testhelix"}
            listing = {"object": "list", "data": [entry]}
        wanted = path.split("/models", 1)[1].strip("/")
        if not wanted:
            return _json(200, listing)
        return _json(200, entry) if wanted == name else _json(404, {"error": {"message": f"no model {wanted!r}"}})


def _json(status: int, body: dict, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    return status, {"content-type": "application/json", **(headers or {})}, json.dumps(body).encode()


def _early_fault(protocol: str, fault: Fault | None) -> tuple[int, dict[str, str], bytes] | None:
    """Faults that replace the answer before the model is asked."""
    if fault is None:
        return None
    if fault.kind == "status":
        headers = {"retry-after": f"{fault.retry_after:g}"} if fault.retry_after is not None else {}
        return _json(fault.code, wire.render_error(protocol, fault.code, f"scripted fault: HTTP {fault.code}"), headers)
    if fault.kind == "context":
        return _json(400, wire.render_error(protocol, 400, "scripted fault: this model's maximum context length "
                                                           "is exceeded (prompt is too long)",
                                            code="context_length_exceeded"))
    if fault.kind == "html":
        return 200, {"content-type": "text/html"}, HTML_PAGE.encode()
    if fault.kind == "stall":
        time.sleep(fault.seconds)
    return None


def _late_fault(fault: Fault | None, c: Completion) -> tuple[Completion, dict | None]:
    """Faults that distort a real answer; returns it with the usage to report (None: none)."""
    u = c.usage
    usage: dict[str, int] | None = {"input": u.input_tokens, "output": u.output_tokens,
                                     "cache_read": u.cache_read_tokens}
    if not u.reported:
        usage = None
    if fault is None:
        return c, usage
    if fault.kind == "nousage":
        return c, None
    if fault.kind == "badargs":
        calls = tuple(ToolCall(t.id, t.name, None, raw_arguments='{"path": "unterminated', error="scripted")
                      for t in c.tool_calls)
        return replace(c, tool_calls=calls), usage
    if fault.kind == "inflated" and usage is not None:
        return c, {k: int(v * fault.factor) for k, v in usage.items()}
    if fault.kind == "oversized":
        pad = "x" * fault.size
        calls = tuple(replace(t, arguments={**t.arguments, "content": str(t.arguments.get("content", "")) + pad})
                      if t.arguments and "content" in t.arguments else t for t in c.tool_calls)
        text = c.text if any(a is not b for a, b in zip(calls, c.tool_calls)) else c.text + pad
        grown = replace(c, text=text, tool_calls=calls, usage=Usage(u.input_tokens, u.output_tokens + fault.size // 4))
        return grown, {**(usage or {"input": u.input_tokens, "cache_read": 0}), "output": u.output_tokens + fault.size // 4}
    return c, usage


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:  # noqa: ARG002 - socketserver calls it so
        """A client that disconnects or stalls is not the server's error: drop it without a
        traceback; anything else is one line on stderr (the request already got its 500)."""
        import sys

        err = sys.exc_info()[1]
        if isinstance(err, (ConnectionError, TimeoutError)):
            return
        print(f"testhelix serve: a request from {client_address[0]} failed: {type(err).__name__}: {err}"[:300],
              file=sys.stderr)


def _handler(server: ModelServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = IDLE_TIMEOUT_S   # a client that stops sending mid-request is dropped, not waited for

        def log_message(self, fmt: str, *args: Any) -> None:   # quiet: the command prints its own lines
            pass

        def _send(self, status: int, headers: dict[str, str], body: bytes) -> None:
            try:
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass                                # the client gave up (timeout): nothing to do

        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0].rstrip("/")
            if path == "/_testhelix/stats":
                self._send(*_json(200, server.snapshot()))
            elif "/models" in path:
                self._send(*server.models(self.headers.get("anthropic-version") is not None, path))
            else:
                self._send(*_json(404, {"error": {"message": f"no route {self.path}"}}))

        def do_POST(self) -> None:
            try:
                raw = self.rfile.read(body_length(self.headers.get("content-length")))
            except RequestRefused as err:
                self.close_connection = True          # the body, if any, is left unread
                self._send(*_json(err.status, {"error": {"message": err.message}}, {"connection": "close"}))
                return
            try:
                self._route(raw)
            except (ConnectionError, TimeoutError):
                raise                                 # the client went away: _QuietServer drops it
            except Exception as err:  # noqa: BLE001 - one request's failure is its 500, never the server's end
                self._send(*_json(500, {"error": {"message": f"server error: {type(err).__name__}: "
                                                              f"{' '.join(str(err).split())[:200]}"}}))

        def _route(self, raw: bytes) -> None:
            path = self.path.split("?", 1)[0].rstrip("/")
            if path == "/_testhelix/faults":
                try:
                    listed = parse_json(raw, [])
                    if not isinstance(listed, list):
                        raise ValueError("expected a JSON list of faults")
                    server.faults.replace([fault_from_dict(d) for d in listed])
                except RequestRefused as err:
                    self._send(*_json(err.status, {"error": {"message": err.message}}))
                    return
                except (ValueError, UserError) as err:
                    self._send(*_json(400, {"error": {"message": str(err)}}))
                    return
                self._send(*_json(200, server.faults.snapshot()))
                return
            if path.endswith("/messages/count_tokens"):
                self._send(*server.count_tokens(raw))
                return
            protocol = next((p for suffix, p in _ROUTES.items() if path.endswith(suffix)), None)
            if protocol is None:
                self._send(*_json(404, {"error": {"message": f"no route {self.path}"}}))
                return
            self._send(*server.answer(protocol, self.headers, raw))

    return Handler
