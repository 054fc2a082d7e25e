"""Which implementation plays each GTDD role: a simulated test double or a model-driven agent.

Apart from gtdd/agents.py (the model-driven roles) so that the simulated roles in gtdd/sim.py can
use the agents' request and result types without an import circle.
"""

from __future__ import annotations

from gtdd.agents import ROUND_TOKEN_CAP, SDK_RETRIES, Coder, LLMCoder, LLMTester, Tester
from gtdd.domains.base import Domain
from gtdd.execution import TraceExecutor
from gtdd.sim import SimCoder, SimTester
from testhelix.llm.base import ChatModel
from testhelix.llm.modelref import ModelRef
from testhelix.run.setup import ModelSettings


def make_coder(ref: ModelRef, domain: Domain, executor: TraceExecutor, models: ModelSettings | None = None,
               round_token_cap: int = ROUND_TOKEN_CAP) -> Coder:
    """`ref`: the coder's model, resolved once by the experiment; `models`: the command's model
    options (--call-timeout, --context-window, --rpm/--tpm); `round_token_cap`: what a model-driven
    coder may spend per round (--round-token-cap)."""
    # the provider declares its models test doubles (ModelRef.simulated): GTDD's own doubles play them
    if ref.simulated:
        return SimCoder(ref.name, domain, executor)
    return LLMCoder(_model(ref, models), round_token_cap)


def make_tester(ref: ModelRef, domain: Domain, models: ModelSettings | None = None,
                round_token_cap: int = ROUND_TOKEN_CAP) -> Tester:
    if ref.simulated:
        return SimTester(ref.name, domain)
    return LLMTester(_model(ref, models), round_token_cap)


def _model(ref: ModelRef, models: ModelSettings | None) -> ChatModel:
    """The model with the command's settings (keyed by the name as given)."""
    models = models or ModelSettings()
    return models.create_model(ref, timeout_s=models.call_timeout_s, max_retries=SDK_RETRIES)
