"""llama.cpp's OpenAI-compatible server with TestHelix's tool-call format (the `local` extra).

    python -m testhelix.llm.local_server --model smollm2-135m --host 127.0.0.1 --port 8012
    testhelix run ... --model openai-compatible:smollm2-135m@http://127.0.0.1:8012/v1

It is `python -m llama_cpp.server` (every option of it works) with three defaults changed so that
its replies equal the in-process provider's (`local:NAME`): the chat format `testhelix-tools`
(local_format.py: the model's own template, one grammar-constrained tool call, greedy decoding),
the context window of the model's GGUF metadata instead of the server's 2048, and one thread.
`--model` also takes a bundled name (`smollm2-135m`). One fix of the request (NullContentFix): the
server's schema refuses the `"content": null` that OpenAI clients send beside tool calls (HTTP 500).
Plain `python -m llama_cpp.server` answers the first step of a session, then fails on that 500.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from testhelix.core.errors import UserError


class NullContentFix:
    """ASGI middleware: an assistant message with `"content": null` (what OpenAI's API and SDK send
    beside tool calls) becomes `""` before llama_cpp.server's request schema, which wants a string,
    answers it with HTTP 500. Nothing else in the request changes."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope.get("type") != "http" or not str(scope.get("path", "")).endswith("/chat/completions"):
            await self.app(scope, receive, send)
            return
        body, more = b"", True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        try:
            data = json.loads(body)
            for m in data.get("messages") or ():
                if isinstance(m, dict) and m.get("role") == "assistant" and m.get("content") is None:
                    m["content"] = ""
            body = json.dumps(data).encode()
        except (ValueError, AttributeError):
            pass   # not JSON: the server answers it as it would have
        delivered = False

        async def replay() -> dict:
            nonlocal delivered
            if not delivered:
                delivered = True
                return {"type": "http.request", "body": body, "more_body": False}
            return dict(await receive())
        await self.app(scope, replay, send)


def server_argv(argv: list[str]) -> list[str]:
    """The llama_cpp.server arguments for `argv`, with this project's defaults added."""
    from testhelix.llm.local import context_window, model_path
    from testhelix.llm.local_format import CHAT_FORMAT
    args = list(argv)
    if "--model" in args:
        i = args.index("--model") + 1
        if i < len(args):
            path = model_path(args[i])
            args[i] = str(path)
            if "--n_ctx" not in args:
                args += ["--n_ctx", str(context_window(path))]
    defaults = {"--chat_format": CHAT_FORMAT, "--n_threads": "1", "--n_threads_batch": "1", "--host": "127.0.0.1"}
    for flag, value in defaults.items():
        if flag not in args:
            args += [flag, value]
    return args


def main(argv: list[str] | None = None) -> None:
    from testhelix.llm.local import require_runtime
    from testhelix.llm.local_format import register
    try:
        require_runtime()
        args = server_argv(sys.argv[1:] if argv is None else argv)
        import llama_cpp.server.__main__ as server_main
    except UserError as err:
        print(f"error: {err}", file=sys.stderr)
        raise SystemExit(2) from None
    except ImportError as err:
        print(f"error: the server needs llama-cpp-python's [server] dependencies ({err.name}); "
              "pip install 'testhelix[local]'", file=sys.stderr)
        raise SystemExit(2) from None
    register()
    make_app = server_main.create_app

    def create_app(*a: Any, **kw: Any) -> Any:
        app = make_app(*a, **kw)
        app.add_middleware(NullContentFix)
        return app
    server_main.create_app = create_app
    sys.argv = ["llama_cpp.server", *args]
    server_main.main()


if __name__ == "__main__":
    main()
