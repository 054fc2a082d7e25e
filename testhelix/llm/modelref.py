"""A model reference: a `--model` value resolved once, at a command's edge (`registry.model_ref`).

Everything later layers ask of a model name is answered here, from the one resolution: which
provider serves it (the registry's key, so a Ray worker or a fork server finds the same provider
object), what it is (`ModelInfo`: canonical name, limits, prices, and the options the provider read
from the name, e.g. a simulated model's `?seed=N&noise=P&latency=S`), whether it is a test double,
which credential it needs, the name a run label uses and how many tasks its provider suggests at
once. The run setup, the runner's plans and its jobs carry this value; it is frozen and pickles,
and nothing below the edge parses the name again.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from testhelix.core.errors import UserError
from testhelix.llm.provider_protocol import ModelInfo


@dataclass(frozen=True)
class ModelRef:
    given: str                  # as the user wrote it: what stores, run meta and the release ledger record
    info: ModelInfo             # what the provider resolved (info.name: canonical, aliases expanded)
    provider_key: str           # the registry's key of its provider: a prefix, or package.module:OBJECT
    simulated: bool             # its provider serves test doubles (ServesTestDoubles)
    credential_env_vars: tuple[str, ...]
    credentials_required: bool  # NeedsCredentials: refused without one of the variables set
    label: str                  # the name in a run label (a compatible server without its URL)
    suggested_tasks: int        # tasks in flight its provider suggests when --jobs is not given

    @property
    def name(self) -> str:
        """The canonical name (aliases expanded, a simulated model's options apart)."""
        return self.info.name

    def __str__(self) -> str:
        return self.given

    def require_credentials(self) -> None:
        """Refuse a model whose provider needs a credential that no variable holds, before a command
        makes any folder or store (a refused start leaves nothing behind). The model itself checks
        again when it is built."""
        if self.credentials_required and not any(os.environ.get(var) for var in self.credential_env_vars):
            raise UserError(f"{' or '.join(self.credential_env_vars)} is not set: export it to use {self.given} "
                            "(nothing was created)")
