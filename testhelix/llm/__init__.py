"""The model layer: one ChatModel protocol (base.py), one provider module per vendor, the registry,
faults.

Entry points: `testhelix.llm.registry.model_ref(name)` resolves a name such as
`anthropic:claude-opus-4-6`, `openai:gpt-5.6-sol`, `openai-compatible:NAME@http://HOST:PORT/v1` or
`sim:strong` once, at a command's edge, into a `ModelRef` (modelref.py), and
`registry.create_model(ref, ...)` builds its model; `testhelix.llm.faults.FaultyModel` wraps any model. Calls are made through
`testhelix.agent.budget.Budget.complete`. Providers bound and record their SDK's retries with
`callwatch.CallWatch` and share one `ratelimit.RateLimiter` per model; `testhelix.llm.serve` serves
any model behind the providers' wire protocols on 127.0.0.1.
"""
