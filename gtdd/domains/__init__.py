"""GTDD domains: a behavioural contract, its reference, schema, generator and population.

`get_domain(name)` returns the object implementing gtdd.domains.base.Domain; new domains register
in DOMAINS with the module path of their `DOMAIN` object, so importing this package stays cheap.
"""

from __future__ import annotations

import importlib

DOMAINS = {"kvstore": "gtdd.domains.kvstore"}


def get_domain(name: str):
    if name not in DOMAINS:
        from testhelix.errors import UserError

        raise UserError(f"unknown domain {name!r}; known: {', '.join(sorted(DOMAINS))}")
    return importlib.import_module(DOMAINS[name]).DOMAIN
