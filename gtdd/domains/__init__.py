"""GTDD domains: a behavioural contract, its reference, schema, generator and population.

`get_domain(spec)` returns an object implementing gtdd.domains.base.Domain, found by

- a built-in name (DOMAINS maps it to the module holding its `DOMAIN` object, so importing this
  package stays cheap),
- a dotted path `package.module:OBJECT` (a domain that lives outside the project), or
- an entry point in the group `gtdd.domains` (an installed package that registers one).

A loaded object is checked for every hook of the Domain protocol once, here.
"""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points

from testhelix.errors import UserError

from gtdd.domains.base import missing_hooks

DOMAINS = {"kvstore": "gtdd.domains.kvstore:DOMAIN"}
ENTRY_POINT_GROUP = "gtdd.domains"


def _load(path: str, spec: str):
    module_name, _, attr = path.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UserError(f"--domain {spec!r}: cannot import {module_name!r} ({exc})") from None
    try:
        return getattr(module, attr or "DOMAIN")
    except AttributeError:
        raise UserError(f"--domain {spec!r}: {module_name} has no attribute {attr or 'DOMAIN'!r}") from None


def get_domain(spec: str):
    if spec in DOMAINS:
        domain = _load(DOMAINS[spec], spec)
    elif ":" in spec:
        domain = _load(spec, spec)
    else:
        found = [ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name == spec]
        if not found:
            raise UserError(f"unknown domain {spec!r}; known: {', '.join(sorted(DOMAINS))}, or give "
                            "package.module:OBJECT, or install a package with a gtdd.domains entry point")
        domain = found[0].load()
    missing = missing_hooks(domain)
    if missing:
        raise UserError(f"--domain {spec!r}: the object lacks Domain hooks: {', '.join(missing)} "
                        "(see gtdd/domains/base.py)")
    return domain
