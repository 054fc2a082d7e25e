"""`gtdd plugin check NAME`: the conformance check of a GTDD domain (testhelix's `plugin check` covers
providers, executors and sandboxes; testhelix cannot import gtdd, so domains are checked here).

The domain is loaded as `--domain` loads it, its hooks are compared with the Domain Protocol, and its
own material must pass its own checks: every generated, population and public trace is valid and
no longer than `max_ops`, each operation's family is one of `families`, every catalogued defect
applies to the reference, and the reference, run by the trace executor in the sandbox every
candidate runs in, agrees with its trusted in-process results (`reference_results`) on every trace.
It lives beside the executor, not among the domains, because it runs one.
"""

from __future__ import annotations

import random
from typing import Any

from gtdd.domains import DOMAINS, ENTRY_POINT_GROUP
from gtdd.domains.base import Domain, Trace
from gtdd.execution import TraceExecutor
from testhelix.conformance.plugin_check import CheckReport
from testhelix.core.plugins import load_plugin

TRACES_PER_FAMILY = 5  # generated per family; with the population's first 20 and the public examples


def check_domain(spec: str, report: CheckReport, sandbox: str | None = None) -> None:
    """`sandbox`: the sandbox the reference's isolated run uses (None: the machine's default), so a
    sandbox plug-in is checked on GTDD's path as `testhelix plugin check sandbox` checks TestPrism's."""
    if sandbox is not None:
        from testhelix.execution.seam import select_sandbox

        report.check(True, f"sandbox {sandbox!r} loads", select_sandbox(sandbox).kind)  # UserError: exit 2
    domain = load_plugin(spec, group=ENTRY_POINT_GROUP, builtins=DOMAINS, option="NAME", what="domain",
                         default_attr="DOMAIN")
    report.check(True, f"domain {spec!r} loads", type(domain).__name__)
    if not report.members(domain, Domain, "domain"):
        return
    families = domain.families
    if not report.check(bool(families) and all(isinstance(f, str) for f in families), "families are named",
                        ", ".join(map(str, families))):
        return
    report.check(bool(domain.spec().strip()) and bool(domain.reference_source().strip()),
                 "spec and reference source are text")
    report.check(_is_module_file(domain.module_name) and str(domain.entry_class).isidentifier(),
                 "the candidate is a module file with an entry class", f"{domain.module_name}: {domain.entry_class}")
    report.check(isinstance(domain.loss, str) and bool(domain.loss.strip()), "the loss is stated", str(domain.loss))
    ok, traces = report.attempt("generate, population, public examples", lambda: _traces(domain))
    if not ok:
        return
    problems = [f"{t.id}: {p}" for t in traces for p in _problems(domain, t)]
    report.check(not problems, f"{len(traces)} traces are valid, within max_ops {domain.max_ops}, of known families",
                 "; ".join(problems[:3]))
    if domain.defects is not None:
        ok, _ = report.attempt("each catalogued defect applies to the reference", lambda: [
            domain.defects.apply_defects(domain.reference_source(), [d.id]) for d in domain.defects.DEFECTS])
        if ok:
            report.check(True, "each catalogued defect applies to the reference", f"{len(domain.defects.DEFECTS)}")
    ok, expected = report.attempt("reference_results", lambda: domain.reference_results(traces))
    if not ok:
        return
    executor = TraceExecutor(domain, 1.0, sandbox)
    ok, got = report.attempt("the reference run in the sandbox", lambda: executor.run(domain.reference_source(), traces))
    if not ok:
        return
    diverging = [t.id for t, e, g in zip(traces, expected, got) if domain.first_divergence(e, g) is not None]
    report.check(len(got) == len(traces) and not diverging,
                 "the reference, run in isolation, agrees with its trusted results",
                 f"{len(traces)} traces" if not diverging else f"diverges on {', '.join(diverging[:3])}")
    ok, config = report.attempt("the execution configuration", executor.execution_config)
    if ok:
        report.check(isinstance(config, dict), "the execution configuration is a record",
                     f"{len(config)} keys, sandbox {config.get('sandbox')!r}")


def _is_module_file(name: object) -> bool:
    return isinstance(name, str) and name.endswith(".py") and name[:-3].isidentifier()


def _traces(domain: Any) -> list[Trace]:
    rng = random.Random(0)
    generated = [domain.generate(rng, family) for family in domain.families for _ in range(TRACES_PER_FAMILY)]
    return [*generated, *domain.population()[:20], *domain.public_examples()]


def _problems(domain: Any, trace: Trace) -> list[str]:
    problems = list(domain.validate(trace.ops))
    if len(trace.ops) > domain.max_ops:
        problems.append(f"{len(trace.ops)} operations > max_ops {domain.max_ops}")
    if trace.family not in domain.families:
        problems.append(f"family {trace.family!r} is not declared")
    unknown = {domain.family_of_op(op) for op in trace.ops} - set(domain.families)
    if unknown:
        problems.append(f"operations of undeclared families {sorted(unknown)}")
    return problems
