"""Search configuration: the paper's optimizer settings as named defaults, and a demo preset.

The paper preset mirrors the seed's AutoSaddler configuration exactly (DESIGN §6). The demo preset
keeps every rule (one edit per proposal, strict screen with zero regressions, development ranking)
but sizes the work for the bundled pack and simulated models on two cores.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from testhelix.errors import UserError


class SearchConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    train_minibatch_size: int = Field(25, ge=1, le=100_000)
    train_eval_attempts: int = Field(1, ge=1, le=100)
    train_epochs: int = Field(1, ge=1, le=1000)
    completed_train_iterations: int = Field(20, ge=1, le=100_000)
    max_candidate_proposals: int = Field(40, ge=1, le=100_000)
    capability_phase_iterations: int = Field(0, ge=0)
    capability_phase_epochs: int = Field(0, ge=0)
    skip_session0: bool = False
    monotonic_full_train_gate: bool = False
    monotonic_train_gate: bool = False
    use_merge: bool = False
    seed: int = 42
    # The TestHelix run configuration the search executes (not strategy fields).
    helix_config: Literal["A", "C"] = "C"
    proposal_split: str = "proposal"
    development_split: str = "development"
    development_limit: int | None = Field(None, ge=1, le=1_000_000, description="evaluate only the first N development tasks")
    per_task_token_cap: int = Field(400_000, ge=1000, le=10**12)
    agent_time_limit_s: float = Field(600.0, gt=0, le=86_400, allow_inf_nan=False)
    workers: int = Field(2, ge=1, le=64)  # as `testhelix run --workers`; each worker is a process
    optimizer_session_timeout_s: float = Field(300.0, gt=0, le=86_400, allow_inf_nan=False)


PRESETS: dict[str, dict] = {
    "paper": {},
    "demo": {
        "train_minibatch_size": 8,
        "completed_train_iterations": 4,
        "max_candidate_proposals": 8,
        "development_limit": 16,
    },
}


def load_config(preset: str = "paper", file: Path | None = None, overrides: dict | None = None) -> SearchConfig:
    if preset not in PRESETS:
        raise UserError(f"--preset: unknown preset {preset!r} (use {', '.join(PRESETS)})")
    data = dict(PRESETS[preset])
    if file is not None:
        data.update(_read_config_file(Path(file)))
    data.update(overrides or {})
    try:
        return SearchConfig.model_validate(data)
    except ValidationError as err:
        problems = [(".".join(str(p) for p in e["loc"]) or "$", e["msg"]) for e in err.errors()]
        raise UserError("invalid search configuration", problems) from None


def _read_config_file(path: Path) -> dict:
    if not path.is_file():
        raise UserError(f"{path}: config file does not exist")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise UserError(f"{path}: not UTF-8 text (byte offset {err.start})") from None
    try:
        data = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as err:
        raise UserError(f"{path}: does not parse: {err}") from None
    if not isinstance(data, dict):
        raise UserError(f"{path}: a config file holds one object of settings")
    return data
