"""Simulated coder and tester: offline test doubles for the GTDD loop (`sim:strong`, `sim:weak`).

They are NOT models and every output says so: modules and generator programs start with a comment
naming them as simulated, and every record they produce carries simulated=true.

SimCoder. It WRITES code by editing a copy of the domain's reference source with the domain's
defect catalogue (`defects.apply_defects`): a test double has no other way to produce working code,
so this copy is its stand-in for programming skill, and every module it writes says so in its
header (and `gtdd report` / `gtdd run` repeat it). It DECIDES only from what a real coder is given:
in a repair round it reads the counterexamples reported so far, the failing public tests and (for
visible fixed tests) the failing saved tests, each with the expected replies the feedback carries,
and works out which of its active defects they expose by running its own single-defect variants on
those traces and comparing with the feedback's expected replies -- it never runs the harness's
reference (tests/gtdd/test_sim_information_flow.py swaps that reference for a decoy and checks the
behaviour is identical). It repairs each exposed defect with the profile's repair probability,
repairs an unexposed one now and then (rereading the spec), and sometimes regresses by injecting a
defect it did not have. The set of active defects travels in the module's header comment, so a
coding request is answered from the request alone, like a single model call.

SimTester. It writes a generator program that embeds traces drawn from the domain's generator, with
family weights aimed at the reported counterexamples' families (when it sees the history) and, for
the source-informed tester, at the families of defects it can spot in the committed module's
source (a catalogued bug pattern whose faulty text is present and whose correct text is absent; it
never reads the reference). Some generators are broken and some traces invalid, so the harness's handling of both is
exercised. The program runs in the same sandbox as an LLM's.

Strength comes from the testhelix simulated-model profiles (testhelix/llm/sim/profiles.py).
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from gtdd.agents import CodingRequest, CodingResult, GeneratorProgram, TestingRequest
from gtdd.commit import PUBLIC_TESTS_FILE
from gtdd.domains.base import Domain, Trace, TraceResult
from gtdd.execution import TraceExecutor, failure_of
from testhelix.core.errors import UserError
from testhelix.llm.sim.profiles import SimProfile, get_profile

CODER_MARK = "# Module written by a simulated coder"
_HEADER = re.compile(r"^# Module written by a simulated coder \((?P<name>[^)]*)\)[^\n]*"
                     r"active defects: (?P<ids>[^\n]*)$", re.M)
TESTER_MARK = "# Trace generator written by a simulated tester"
SELECT_VARIANT = "__variant__"
# One module that hosts several single-defect variants: the first operation of a trace picks one.
# It lets the simulated coder check every (defect, trace) pair in a single sandboxed run.
_MULTIPLEXER = """
SOURCES = {sources!r}
VARIANTS = []
for number, text in enumerate(SOURCES):
    namespace = {{"__name__": "variant%d" % number}}
    exec(compile(text, "variant%d.py" % number, "exec"), namespace)
    VARIANTS.append(namespace[{entry!r}])


class {entry}:
    def __init__(self):
        self.inner = None

    def execute(self, cmd, args):
        if self.inner is None:
            self.inner = VARIANTS[args[0]]()
            return "OK"
        return self.inner.execute(cmd, args)
"""


def _key(expected: TraceResult) -> str:
    return json.dumps(list(expected.replies), sort_keys=True, default=str)


@dataclass(frozen=True)
class DefectCatalogue:
    defects: tuple[Any, ...]  # each has .id, .family, .find, .replace
    apply: Callable[[str, Sequence[str]], str]

    def by_id(self) -> dict[str, Any]:
        return {d.id: d for d in self.defects}


def load_defects(domain: Domain) -> DefectCatalogue:
    """The domain's defect catalogue (`domain.defects`)."""
    module = domain.defects
    if module is None:
        raise UserError(f"domain {domain.name!r} has no defect catalogue, so the simulated coder cannot "
                        "play it; use an LLM coder (--coder anthropic:..., openai:...)")
    return DefectCatalogue(tuple(module.DEFECTS), module.apply_defects)


@dataclass(frozen=True)
class CoderTraits:
    initial_defects: int
    repair: float  # chance an exposed defect is repaired
    self_fix: float  # chance an unexposed defect is repaired anyway
    regress: float  # chance a repair round injects a new defect
    tamper: float  # chance the session edits a protected file

    @classmethod
    def of(cls, profile: SimProfile, catalogue_size: int) -> CoderTraits:
        return cls(initial_defects=max(2, round(catalogue_size * (1 - profile.base_skill) * 0.45)),
                   repair=profile.repair_skill, self_fix=profile.base_skill * 0.2,
                   regress=(1 - profile.repair_skill) * 0.6, tamper=profile.malformed_rate)


class SimCoder:
    simulated = True

    def __init__(self, name: str, domain: Domain, executor: TraceExecutor):
        self.name = name
        self.domain = domain
        self.executor = executor
        self.catalogue = load_defects(domain)
        self.traits = CoderTraits.of(get_profile(name.partition(":")[2]), len(self.catalogue.defects))
        self.reference = domain.reference_source()
        self._exposure: dict[tuple[str, str, str], bool] = {}  # (defect, trace id, expected) -> exposed

    def render(self, defect_ids: Sequence[str]) -> str:
        ids = sorted(defect_ids)
        header = (f"{CODER_MARK} ({self.name}), a test double and not a language model, editing a copy "
                  f"of the reference; active defects: {','.join(ids) or '-'}\n")
        return header + self.catalogue.apply(self.reference, ids)

    def _applies(self, ids: Sequence[str]) -> bool:
        try:
            self.catalogue.apply(self.reference, sorted(ids))
            return True
        except Exception:  # noqa: BLE001 - overlapping text edits: that combination is not used
            return False

    def _inject(self, rng: random.Random, active: list[str], count: int) -> list[str]:
        pool = [d.id for d in self.catalogue.defects if d.id not in active]
        rng.shuffle(pool)
        for defect_id in pool:
            if count <= 0:
                break
            if self._applies(active + [defect_id]):
                active = active + [defect_id]
                count -= 1
        return active

    def active_defects(self, module: str) -> list[str]:
        match = _HEADER.search(module)
        if not match:
            return []
        known = self.catalogue.by_id()
        return [d for d in match["ids"].split(",") if d in known]

    def exposed(self, active: Sequence[str], evidence: Sequence[tuple[Trace, TraceResult]]) -> set[str]:
        """Active defects that some evidence trace exposes: its own single-defect variant disagrees
        with the expected replies the feedback gave for that trace. All checked in one isolated run
        of its own code; the harness's reference is never consulted."""
        expected_of = {t.id: exp for t, exp in evidence}
        todo = [(d, t) for d in active for t, _ in evidence if (d, t.id, _key(expected_of[t.id])) not in self._exposure]
        if todo:
            variants = sorted({d for d, _ in todo})
            mux = _MULTIPLEXER.format(entry=self.domain.entry_class, sources=[self.catalogue.apply(self.reference, [d])
                                                            for d in variants])
            runs = [Trace.of([{"cmd": SELECT_VARIANT, "args": [variants.index(d)]}, *t.ops], t.family)
                    for d, t in todo]
            for (d, t), got in zip(todo, self.executor.run(mux, runs)):
                observed = TraceResult(tuple(got.replies[1:]), got.error)
                exp = expected_of[t.id]
                self._exposure[(d, t.id, _key(exp))] = (not got.replies
                                                        or failure_of(self.domain, t, exp, observed) is not None)
        return {d for d in active if any(self._exposure[(d, t.id, _key(exp))] for t, exp in evidence)}

    def write_module(self, request: CodingRequest) -> CodingResult:
        rng = random.Random(request.seed)
        if request.current_module is None:
            active = self._inject(rng, [], self.traits.initial_defects)
            return CodingResult(self.render(active), True, self.name, note="first module")
        active = self.active_defects(request.current_module)
        shown = list(request.counterexamples) + list(request.visible_failures)
        shown += [p for p in request.public_results if not p.get("passed")]
        evidence = [(Trace.of(c["ops"], c.get("family", "public")), TraceResult(tuple(c["expected"]), None))
                    for c in shown]
        exposed = self.exposed(active, evidence)
        kept = [d for d in active
                if rng.random() >= (self.traits.repair if d in exposed else self.traits.self_fix)]
        regressed = rng.random() < self.traits.regress
        if regressed:
            kept = self._inject(rng, kept, 1)
        edits = {PUBLIC_TESTS_FILE: "[]\n"} if rng.random() < self.traits.tamper else {}
        note = (f"exposed {len(exposed)} of {len(active)} defects, repaired "
                f"{len(set(active) - set(kept))}" + ("; regressed" if regressed else ""))
        return CodingResult(self.render(kept), True, self.name, edits=edits, note=note)


@dataclass(frozen=True)
class TesterTraits:
    diagnosis: float  # chance a visible defect in the module is noticed (informed tester)
    invalid: float  # chance a trace is written invalid
    broken: float  # chance the whole generator fails to run

    @classmethod
    def of(cls, profile: SimProfile) -> TesterTraits:
        return cls(diagnosis=profile.diagnosis, invalid=0.05 + 2 * profile.malformed_rate,
                   broken=0.1 + 0.2 * (1 - profile.step_efficiency))


class SimTester:
    simulated = True

    def __init__(self, name: str, domain: Domain):
        self.name = name
        self.domain = domain
        self.catalogue = load_defects(domain)
        self.traits = TesterTraits.of(get_profile(name.partition(":")[2]))

    def visible_defects(self, module: str) -> list[Any]:
        """Catalogued bug patterns that show in the source: the faulty text is there, the correct
        text (which the catalogue says occurs once in a correct module) is gone."""
        return [d for d in self.catalogue.defects if d.replace and d.replace in module and d.find not in module]

    def family_weights(self, request: TestingRequest, rng: random.Random) -> dict[str, float]:
        weights = {f: 1.0 for f in request.families}
        for c in request.counterexamples:
            weights[c["family"]] = weights.get(c["family"], 1.0) + 1.0
        if request.module is not None:
            for defect in self.visible_defects(request.module):
                if rng.random() < self.traits.diagnosis:
                    weights[defect.family] = weights.get(defect.family, 1.0) + 4.0
        return weights

    def write_generator(self, request: TestingRequest) -> GeneratorProgram:
        rng = random.Random(request.seed)
        header = f"{TESTER_MARK} ({self.name}), a test double and not a language model.\n"
        if rng.random() < self.traits.broken:
            return GeneratorProgram(header + "def generate(rng, n):\n    raise RuntimeError('simulated "
                                    "broken generator')\n", True, self.name, "broken generator")
        weights = self.family_weights(request, rng)
        families, w = list(weights), list(weights.values())
        traces = []
        for _ in range(request.traces):
            ops = [dict(op) for op in self.domain.generate(rng, rng.choices(families, w)[0]).ops]
            if rng.random() < self.traits.invalid:
                ops[rng.randrange(len(ops))] = {"cmd": "NO_SUCH_COMMAND", "args": []}
            traces.append(ops)
        body = (f"import json\n\nTRACES = json.loads({json.dumps(json.dumps(traces))})\n\n\n"
                "def generate(rng, n):\n    return TRACES[:n]\n")
        return GeneratorProgram(header + body, True, self.name,
                                "weights " + ",".join(f"{f}={x:g}" for f, x in weights.items()))
