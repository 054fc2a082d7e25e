"""Which implementation plays each GTDD role: a simulated test double or a model-driven agent.

Apart from gtdd/agents.py (the model-driven roles) so that the simulated roles in gtdd/sim.py can
use the agents' request and result types without an import circle.
"""

from __future__ import annotations

from gtdd.agents import Coder, LLMCoder, LLMTester, Tester
from gtdd.domains.base import Domain
from gtdd.execution import TraceExecutor
from gtdd.sim import SimCoder, SimTester
from testhelix.llm.registry import create_model, is_simulated, resolve


def make_coder(name: str, domain: Domain, executor: TraceExecutor) -> Coder:
    info = resolve(name)  # expands aliases; unknown names are a UserError
    # the provider declares its models test doubles (registry.is_simulated): GTDD's own doubles play them
    if is_simulated(info.name):
        return SimCoder(info.name, domain, executor)
    return LLMCoder(create_model(info.name))


def make_tester(name: str, domain: Domain) -> Tester:
    info = resolve(name)
    if is_simulated(info.name):
        return SimTester(info.name, domain)
    return LLMTester(create_model(info.name))
