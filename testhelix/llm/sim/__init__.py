"""Simulated models (`sim:strong`, `sim:weak`, and any profile you register): offline test doubles
at the provider boundary that play every role through the same protocol and tools as a real model.

See profiles.py (how to define another one), model.py (roles, usage, the `simulated` flag),
agent.py (the tool-using policy and how strategy content changes it) and optimizer.py (the
optimizer-role protocol used by AutoSaddler).
"""
