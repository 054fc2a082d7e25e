"""llama.cpp's OpenAI-compatible server with TestHelix's tool-call format (the `local` extra).

    python -m testhelix.llm.local_server --model smollm2-135m --host 127.0.0.1 --port 8012
    testhelix run ... --model openai-compatible:smollm2-135m@http://127.0.0.1:8012/v1

It is `python -m llama_cpp.server` (every option of it works) with three defaults changed so that
its replies equal the in-process provider's (`local:NAME`): the chat format `testhelix-tools`
(local_format.py: the model's own template, one grammar-constrained tool call, greedy decoding),
the context window of the model's GGUF metadata instead of the server's 2048, and one thread.
`--model` also takes a bundled name (`smollm2-135m`). Plain `python -m llama_cpp.server` works with
the same model string too, but then tool calls depend on the server's own chat format.
"""

from __future__ import annotations

import sys

from testhelix.errors import UserError


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
        from llama_cpp.server.__main__ import main as serve
    except UserError as err:
        print(f"error: {err}", file=sys.stderr)
        raise SystemExit(2) from None
    except ImportError as err:
        print(f"error: the server needs llama-cpp-python's [server] dependencies ({err.name}); "
              "pip install 'testhelix[local]'", file=sys.stderr)
        raise SystemExit(2) from None
    register()
    sys.argv = ["llama_cpp.server", *args]
    serve()


if __name__ == "__main__":
    main()
