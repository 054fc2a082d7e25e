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
from testhelix.llm.registry import is_simulated, resolve
from testhelix.runsetup import ModelSettings


def make_coder(name: str, domain: Domain, executor: TraceExecutor, models: ModelSettings | None = None,
               round_token_cap: int = ROUND_TOKEN_CAP) -> Coder:
    """`models`: the command's model options (--call-timeout, --context-window, --rpm/--tpm);
    `round_token_cap`: what a model-driven coder may spend per round (--round-token-cap)."""
    info = resolve(name)  # expands aliases; unknown names are a UserError
    # the provider declares its models test doubles (registry.is_simulated): GTDD's own doubles play them
    if is_simulated(info.name):
        return SimCoder(info.name, domain, executor)
    return LLMCoder(_model(name, models), round_token_cap)


def make_tester(name: str, domain: Domain, models: ModelSettings | None = None,
                round_token_cap: int = ROUND_TOKEN_CAP) -> Tester:
    info = resolve(name)
    if is_simulated(info.name):
        return SimTester(info.name, domain)
    return LLMTester(_model(name, models), round_token_cap)


def _model(name: str, models: ModelSettings | None) -> ChatModel:
    """The model with the command's settings (keyed by the name as given; create_model expands aliases)."""
    models = models or ModelSettings()
    return models.create_model(name, timeout_s=models.call_timeout_s, max_retries=SDK_RETRIES)
