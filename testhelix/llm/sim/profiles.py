"""Profiles of simulated models: how able a `sim:NAME` model is.

Define another simulated model by registering a profile:

    from testhelix.llm.sim.profiles import SimProfile, register_profile
    register_profile(SimProfile(name="sloppy", base_skill=0.15, repair_skill=0.3, diagnosis=0.3,
                                step_efficiency=0.5, malformed_rate=0.1, review_accuracy=0.4))
    model = create_model(model_ref("sim:sloppy"), task=task, seed=1)

Every probability is per decision and deterministic for (seed, prompt). What strategy text adds to
them is documented in cues.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from testhelix.core.errors import UserError


@dataclass(frozen=True)
class SimProfile:
    name: str
    base_skill: float          # chance that a test pick has the wanted role (reproducing test, guard)
    repair_skill: float        # chance that a written repair is one the own runs support best
    diagnosis: float           # chance of blaming what the runs point at when a test fails on the own repair
    step_efficiency: float     # chance that a step does useful work instead of looking around
    review_accuracy: float     # chance that the reviewer flags a test it has evidence against
    malformed_rate: float = 0.0  # chance that a reply carries arguments that are not JSON
    tests_per_suite: int = 3     # one reproducing test plus guards
    context_window: int = 200000
    max_output_tokens: int = 8192

    def __post_init__(self) -> None:
        for name in ("base_skill", "repair_skill", "diagnosis", "step_efficiency", "review_accuracy",
                     "malformed_rate"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"SimProfile.{name} must be in [0, 1], got {value}")
        if self.tests_per_suite < 1:
            raise ValueError("SimProfile.tests_per_suite must be >= 1")


_PROFILES: dict[str, SimProfile] = {}


def register_profile(profile: SimProfile) -> None:
    _PROFILES[profile.name] = profile


def get_profile(name: str) -> SimProfile:
    try:
        return _PROFILES[name]
    except KeyError:
        raise UserError(f"unknown simulated model sim:{name}; known: "
                        + ", ".join(f"sim:{n}" for n in sorted(_PROFILES))) from None


register_profile(SimProfile(name="strong", base_skill=0.55, repair_skill=0.8, diagnosis=0.8,
                            step_efficiency=0.9, review_accuracy=0.85, malformed_rate=0.0))
register_profile(SimProfile(name="weak", base_skill=0.25, repair_skill=0.45, diagnosis=0.45,
                            step_efficiency=0.6, review_accuracy=0.55, malformed_rate=0.05))
