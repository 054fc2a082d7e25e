"""GTDD domains: a behavioural contract, its reference, schema, generator and population.

`get_domain(spec)` returns an object implementing gtdd.domains.base.Domain, found through the
project's one plug-in loader (testhelix/core/plugins.py) by

- a built-in name (DOMAINS maps it to the module holding its `DOMAIN` object, so importing this
  package stays cheap),
- a dotted path `package.module:OBJECT` (a domain that lives outside the project), or
- an entry point in the group `gtdd.domains` (an installed package that registers one).

A loaded object is checked for every hook of the Domain protocol once, here.
"""

from __future__ import annotations

from gtdd.domains.base import Domain, missing_hooks
from testhelix.core.errors import UserError
from testhelix.core.plugins import DOMAINS_GROUP, load_plugin

DOMAINS = {"kvstore": "gtdd.domains.kvstore:DOMAIN"}
ENTRY_POINT_GROUP = DOMAINS_GROUP


def get_domain(spec: str) -> Domain:
    domain = load_plugin(spec, group=ENTRY_POINT_GROUP, builtins=DOMAINS, option="--domain", what="domain",
                         default_attr="DOMAIN")
    missing = missing_hooks(domain)
    if missing:
        raise UserError(f"--domain {spec!r}: the object lacks Domain hooks: {', '.join(missing)} "
                        "(see gtdd/domains/base.py)")
    return domain
