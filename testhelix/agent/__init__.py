"""The agent layer: the shared inference budget and time caps (budget.py), the agent loop
(loop.py: `AgentSession`, `SessionConfig`, `run_agent_session`), its tools (tools.py),
trajectories and replay (trajectory.py), prompt text (prompts.py) and the single-call roles
(calls.py: planning, review, feedback, challenge). Everything a pipeline needs for one task runs
under one `Budget`.
"""
