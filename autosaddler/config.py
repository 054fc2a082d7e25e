"""Search configuration: the paper's optimizer settings as named defaults, and a demo preset.

The paper preset mirrors the seed's AutoSaddler configuration (train_minibatch_size=25,
train_epochs=1, completed_train_iterations=20, max_candidate_proposals=40). The demo preset keeps
every rule (one edit per proposal, strict screen with zero regressions, development ranking) but
sizes the work for the bundled pack and simulated models on two cores.

Every setting here does something. The seed also names settings whose value in its configuration
switches a feature off or leaves the default behaviour (train_eval_attempts, capability phases,
skip_session0, the monotonic gates, use_merge); this search implements exactly that behaviour and
has no switch for it, so those names are not settings and are refused like any unknown name.

`train_epochs` > 1 walks the proposal tasks again, reshuffled per epoch with the search's seeded
RNG; a minibatch never straddles two epochs (each epoch's tail shorter than a minibatch is left
out), so every minibatch holds tasks not used before in its epoch. Each of the three optimizer
sessions (selection, diagnosis and revision, reflection) has its own time limit.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from testhelix.core.errors import UserError

_HELD_FOR = {"development": "ranking", "proposal": "proposals", "release": "the release gate",
             "test": "the final report"}


class SearchConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    train_minibatch_size: int = Field(25, ge=1, le=100_000)
    train_epochs: int = Field(1, ge=1, le=1000)
    completed_train_iterations: int = Field(20, ge=1, le=100_000)
    max_candidate_proposals: int = Field(40, ge=1, le=100_000)
    seed: int = Field(42, ge=0, le=2**63 - 1)
    # The TestHelix run configuration the search executes (not strategy fields).
    helix_config: Literal["A", "C"] = "C"
    proposal_split: str = "proposal"
    development_split: str = "development"
    development_limit: int | None = Field(None, ge=1, le=1_000_000, description="evaluate only the first N development tasks")
    per_task_token_cap: int = Field(400_000, ge=1000, le=10**12)
    agent_time_limit_s: float = Field(600.0, gt=0, le=86_400, allow_inf_nan=False)
    workers: int = Field(2, ge=1, le=64)  # as `testhelix run --workers`; each worker is a process
    # Where a gate records the release tasks it looked at (autosaddler/ledger.py): "machine", the
    # machine-wide ledger whose guard refuses a second look; "run", a ledger inside the gate's run
    # folder, so a demo's look cannot block a user's later gate on the same split.
    release_ledger: Literal["machine", "run"] = "machine"
    selection_timeout_s: float = Field(300.0, gt=0, le=86_400, allow_inf_nan=False,
                                       description="time limit of the parent-selection session")
    diagnosis_timeout_s: float = Field(300.0, gt=0, le=86_400, allow_inf_nan=False,
                                       description="time limit of the diagnosis-and-revision session")
    reflection_timeout_s: float = Field(300.0, gt=0, le=86_400, allow_inf_nan=False,
                                        description="time limit of the reflection session")

    @field_validator("*", mode="before")
    @classmethod
    def _no_booleans(cls, value: object, info: ValidationInfo) -> object:
        # JSON's true is Python's 1: no setting here is a switch, so a boolean is a mistake, not 1
        if isinstance(value, bool):
            raise ValueError(f"is {str(value).lower()}, a boolean; {info.field_name} takes a number or a name")
        return value

    @field_validator("proposal_split", "development_split")
    @classmethod
    def _never_held_out(cls, name: str, info: ValidationInfo) -> str:
        # The search trains on the proposal split and ranks on the development split; the release
        # split belongs to the gate and the test split to the final report (docs/design.md §6).
        trains = info.field_name == "proposal_split"
        held_out = ("development", "release", "test") if trains else ("proposal", "release", "test")
        if name in held_out:
            raise ValueError(f"is {name!r}: a search never {'trains' if trains else 'ranks'} on the {name} split "
                             f"(its tasks are held out for {_HELD_FOR[name]})")
        return name

    def session_timeouts(self) -> dict[str, float]:
        return {"selection": self.selection_timeout_s, "diagnosis": self.diagnosis_timeout_s,
                "reflection": self.reflection_timeout_s}


PRESETS: dict[str, dict] = {
    "paper": {},
    # The demo evaluates the first 16 development tasks: a search orders them round robin over the
    # routing contexts and katas (testhelix.tasks.splits.spread_by_context), so the subset holds all seven.
    # Minibatches of 12: the initial strategy solves about four in five tasks, so a minibatch of 12
    # shows the optimizer two or three failures to diagnose (one of 8 often shows none). Five rounds
    # and the gate on the whole release split stay within the demo's few minutes on two cores.
    "demo": {
        "train_minibatch_size": 12,
        "completed_train_iterations": 5,
        "max_candidate_proposals": 10,
        "development_limit": 16,
        "release_ledger": "run",
    },
}


def load_config(preset: str = "paper", file: Path | None = None, overrides: dict | None = None) -> SearchConfig:
    if preset not in PRESETS:
        raise UserError(f"--preset: unknown preset {preset!r} (use {', '.join(PRESETS)})")
    data = dict(PRESETS[preset])
    if file is not None:
        data.update(_read_config_file(Path(file)))
    data.update(overrides or {})
    return config_from_data(data)


def config_from_data(data: dict) -> SearchConfig:
    """Validate settings (also a run directory's stored ones); every problem is named by its key."""
    try:
        return SearchConfig.model_validate(data)
    except ValidationError as err:
        problems = [(".".join(str(p) for p in e["loc"]) or "$", e["msg"]) for e in err.errors()]
        raise UserError("invalid search configuration", problems) from None


def _read_config_file(path: Path) -> dict:
    from testhelix.core import readers

    if not path.is_file():
        raise UserError(f"{path}: config file does not exist")
    data = readers.read_settings(path)  # JSON or TOML by extension; anything else is refused naming them
    if not isinstance(data, dict):
        raise UserError(f"{path}: a config file holds one object of settings")
    return data
