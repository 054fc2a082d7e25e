"""Opt-in response cache: rerunning a recorded experiment costs nothing and repeats exactly.

The key is the SHA-256 of the canonical JSON of the request: provider, model, messages, tools,
settings, maximum output and the *sample index*. Credentials and base URLs are not part of it (the
model name carries the server's model id, not its address). The sample index counts identical
requests within one `CachedModel`: the first identical request is sample 0, the second sample 1,
and so on, so retries of a request that a real model answered differently come back differently
too, and in the same order.

Entries are JSON files `<cache_dir>/<key[:2]>/<key>.json`, written atomically. A hit returns the
recorded completion with `cache_hit=True`; its recorded token usage is kept (so budget decisions,
and therefore the whole run, repeat exactly), while the money spent on a hit is zero: the ledger
row of a hit carries cost 0.0 and the original cost stays in `metadata["recorded_cost_usd"]`.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from dataclasses import replace
from pathlib import Path

from testhelix.llm.base import ChatModel, Completion, ModelRequest

CACHE_FORMAT = 1


def request_key(model_name: str, request: ModelRequest, sample_index: int) -> str:
    provider, _, model = model_name.partition(":")
    if provider == "openai-compatible":
        model = model.split("@", 1)[0]        # the server address is not part of the request
    body = {"format": CACHE_FORMAT, "provider": provider, "model": model,
            "messages": [m.to_dict() for m in request.messages], "tools": [t.to_dict() for t in request.tools],
            "settings": sorted([list(s) for s in request.settings]), "max_output_tokens": request.max_output_tokens,
            "sample_index": sample_index}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode()).hexdigest()


class ResponseCache:
    def __init__(self, cache_dir: Path):
        self.dir = Path(cache_dir)
        self.dir.mkdir(parents=True, exist_ok=True)

    def _path(self, key: str) -> Path:
        return self.dir / key[:2] / f"{key}.json"

    def get(self, key: str) -> Completion | None:
        path = self._path(key)
        if not path.is_file():
            return None
        data = json.loads(path.read_text())
        return Completion.from_dict(data, cache_hit=True)

    def put(self, key: str, completion: Completion) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w") as fh:
            json.dump(completion.to_dict(), fh, sort_keys=True)
        os.replace(tmp, path)


class CachedModel:
    """Wraps a ChatModel: answers from the cache when it can, records every fresh answer."""

    def __init__(self, inner: ChatModel, cache: ResponseCache):
        self.inner = inner
        self.cache = cache
        self.name = inner.name
        self.context_window = inner.context_window
        self._seen: dict[str, int] = {}
        self._lock = threading.Lock()

    def complete(self, request: ModelRequest) -> Completion:
        base = request_key(self.name, request, 0)
        with self._lock:
            index = self._seen.get(base, 0)
            self._seen[base] = index + 1
        key = base if index == 0 else request_key(self.name, request, index)
        hit = self.cache.get(key)
        if hit is not None:
            meta = {**hit.metadata, "recorded_cost_usd": hit.usage.cost_usd}
            return replace(hit, usage=replace(hit.usage, cost_usd=0.0), metadata=meta)
        fresh = self.inner.complete(request)
        self.cache.put(key, fresh)
        return fresh
