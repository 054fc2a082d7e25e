"""The simulated tool-using agent: one decision per call, derived from the visible transcript only.

The policy keeps no state between calls. Everything it knows comes from the messages it is sent:
its own earlier notes (a `state:` line in its replies: which bank tests are in the suite, which
repair option is in repair/, which tests it dropped) and the observations still visible. When the
loop trims the context, elided observations are forgotten (a run is repeated, a failing test may
be picked again) -- so `contextTokens` has a real effect, as do `agentSteps` / `repairSteps` (more
chances to correct itself) and the strategy text in the prompt (see `strategy_effect`).

Each step, in order: read back unknown state (repair rounds), look around (wasted steps, more
often for less efficient profiles), write the suite, apply feedback, write a repair, run on the
initial program, fix a suite that does not fail there, run on the own repair, blame the repair or
the failing tests (right with probability `diagnosis`, which the strategy content shifts by half
as much as the test choice), and submit once the suite fails on the
initial program and passes on the repair.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field

from testhelix.agent.prompts import FEEDBACK_HEADER, GUIDANCE_HEADER, SKILLS_HEADER
from testhelix.llm.base import Message, ModelRequest, ToolCall
from testhelix.llm.sim.bank import SimBank
from testhelix.llm.sim.profiles import SimProfile

SUITE_FILE = "suite/test_reproduction.py"
_NOTE = re.compile(r"^state: (.*)$", re.M)
_FAILED = re.compile(r"(?:FAILED|ERROR)\s+\S*?::(test_\w+)")
_RUN_HEAD = re.compile(r"^suite on (initial|repair) program: (pass|fail|error)")
_DEF = re.compile(r"^def (test_\w+)\(", re.M)
_SKILL = re.compile(r"^### ([\w-]+) \(contexts: ([^)]*)\)", re.M)
_LESSON_DO = re.compile(r"^- Do: (.*)$", re.M)
USEFUL_WORDS = ("bug report", "expected", "initial program", "fail", "boundary", "reproduce", "repair",
                "specification", "minimal", "exact scenario", "edge")
HARMFUL_WORDS = ("error message", "exact message", "repr", "internal", "private", "implementation detail",
                 "timing", "ordering of dict")


def strategy_effect(messages: tuple[Message, ...], context: str, profile: SimProfile) -> float:
    """How much the strategy content visible in the prompt shifts the chance of a good test pick."""
    system = next((m.content for m in messages if m.role == "system"), "")
    users = [m.content for m in messages if m.role == "user"]
    effect = 0.0
    if SKILLS_HEADER in system:
        fits = [context in [c.strip() for c in ctxs.split(",")] for _, ctxs in _SKILL.findall(system)]
        effect += profile.skill_boost * min(2, sum(fits)) - profile.misfit_skill_penalty * fits.count(False)
    lessons = [do.lower() for text in users for do in _LESSON_DO.findall(text)]
    useful = sum(1 for do in lessons if sum(w in do for w in USEFUL_WORDS) >= 2)
    harmful = sum(1 for do in lessons if any(w in do for w in HARMFUL_WORDS))
    effect += profile.lesson_boost * min(2, useful) - profile.harmful_lesson_penalty * harmful
    guidance = next((u for u in users if u.startswith(GUIDANCE_HEADER)), "").lower()
    if any(w in guidance for w in USEFUL_WORDS):
        effect += profile.guidance_boost
    return effect


@dataclass
class Run:
    program: str
    status: str
    failing: list[str]


@dataclass
class View:
    """What the transcript shows."""

    suite: list[str] | None = None        # None: unknown (repair rounds before reading it back)
    repair: int | None = None             # option number, 0 = untouched initial copy, None = unknown
    dropped: set[str] = field(default_factory=set)
    runs: list[Run] = field(default_factory=list)   # runs since the latest state change
    feedback_done: bool = False
    looked: int = 0


def _note(view: View) -> str:
    return (f"state: suite={','.join(view.suite or [])} | repair={view.repair} | "
            f"drop={','.join(sorted(view.dropped))} | fb={int(view.feedback_done)}")


def _parse_note(text: str, view: View) -> bool:
    m = None
    for m in _NOTE.finditer(text or ""):
        pass
    if m is None:
        return False
    parts = dict(p.strip().split("=", 1) for p in m.group(1).split("|") if "=" in p)
    view.suite = [n for n in parts.get("suite", "").split(",") if n]
    view.repair = int(parts["repair"]) if parts.get("repair", "None") not in ("None", "") else None
    view.dropped |= {n for n in parts.get("drop", "").split(",") if n}
    view.feedback_done = parts.get("fb") == "1"
    view.runs = []
    return True


def read_view(request: ModelRequest, bank: SimBank, phase: str) -> View:
    view = View(suite=[] if phase != "repair" else None, repair=0 if phase != "repair" else None)
    calls: dict[str, ToolCall] = {}
    for msg in request.messages:
        if msg.role == "assistant":
            _parse_note(msg.content, view)
            for c in msg.tool_calls:
                calls[c.id] = c
            continue
        call = calls.get(msg.tool_call_id or "")
        if msg.role != "tool" or call is None or msg.content.startswith("[elided"):
            continue
        args = call.arguments or {}
        if call.name in ("list_files", "read_file") and str(args.get("path", "")).startswith("program"):
            view.looked += 1
        if call.name == "run_tests":
            head = _RUN_HEAD.match(msg.content)
            if head:
                view.runs.append(Run(head.group(1), head.group(2), _FAILED.findall(msg.content)))
        elif call.name == "read_file" and not msg.content.startswith("error"):
            path = str(args.get("path", ""))
            if path == SUITE_FILE:
                view.suite, view.runs = _DEF.findall(msg.content), []
            elif path.startswith("repair/"):
                rel = path[len("repair/"):]
                option = next((o.number for o in bank.repairs if dict(o.files).get(rel) == msg.content), 0)
                view.repair, view.runs = option, []
        elif call.name == "read_file" and str(args.get("path", "")) == SUITE_FILE:
            view.suite, view.runs = [], []          # no suite file yet
    return view


class SimAgentPolicy:
    def __init__(self, profile: SimProfile, bank: SimBank, context: str, package_files: tuple[str, ...]):
        self.profile, self.bank, self.context, self.package_files = profile, bank, context, package_files

    def decide(self, request: ModelRequest, phase: str, rng: random.Random) -> tuple[str, list[ToolCall]]:
        p, view = self.profile, read_view(request, self.bank, phase)
        step = request.tags.step or 0
        call = _Caller(step)
        if rng.random() < p.malformed_rate:
            return "Writing the file.", [call.raw("write_file", '{"path": "suite/x.py", "content": "oops')]
        if view.suite is None:
            return "Reading my earlier suite back.", [call("read_file", path=SUITE_FILE)]
        if view.repair is None:
            target = self.bank.repairs[0].files[0][0] if self.bank.repairs else self.package_files[0]
            return "Reading my earlier repair back.", [call("read_file", path=f"repair/{target}")]
        if view.looked < 2 and rng.random() > p.step_efficiency:
            target = rng.choice(("program", *[f"program/{f}" for f in self.package_files]))
            name = "list_files" if target == "program" else "read_file"
            return "Looking at the program first.", [call(name, path=target)]
        p_good = min(0.97, max(0.02, p.base_skill + strategy_effect(request.messages, self.context, p)))
        self.diagnosis = min(0.98, max(0.02, p.diagnosis + (p_good - p.base_skill) / 2))
        if not view.suite:
            view.suite = self._pick(view, p_good, rng, p.tests_per_suite)
            text, calls = self._write_suite(view, call, "Writing a suite that reproduces the report.")
            if view.repair == 0 and self.bank.repairs and rng.random() < p.step_efficiency:
                view.repair = self._choose_repair(None, rng)     # an efficient model writes both at once
                text, more = self._write_repair(view, call)
                calls += more
            return text, calls
        if phase == "repair" and not view.feedback_done:
            return self._apply_feedback(request, view, call, rng)
        if view.repair == 0 and self.bank.repairs:
            view.repair = self._choose_repair(None, rng)
            return self._write_repair(view, call)
        initial = next((r for r in reversed(view.runs) if r.program == "initial"), None)
        if initial is None:
            return "Running the suite on the initial program.", [call("run_tests", program="initial")]
        if initial.status != "fail":
            bad = [n for n in initial.failing if n in view.suite] if initial.status == "error" else []
            keep = [n for n in view.suite if n not in bad]
            if initial.status == "pass" and len(keep) >= p.tests_per_suite + 2:
                keep.remove(rng.choice(keep))
            view.dropped |= set(bad)
            view.suite = keep + self._pick(view, p_good, rng, 1, exclude=set(keep))
            return self._write_suite(view, call, "The suite does not fail on the initial program; adding a test.")
        own = next((r for r in reversed(view.runs) if r.program == "repair"), None)
        if own is None:
            return "Running the suite on my repair.", [call("run_tests", program="repair")]
        if own.status == "pass":
            return "The suite fails on the initial program and passes on my repair.", [call("submit", summary="done")]
        return self._blame(view, own, call, rng, p_good)

    # --- decisions ---------------------------------------------------------------------------
    def _pick(self, view: View, p_good: float, rng: random.Random, n: int, exclude: set[str] = frozenset()) -> list[str]:
        taken = set(view.suite or ()) | set(exclude) | view.dropped
        chosen: list[str] = []
        for _ in range(n):
            free = [t for t in self.bank.tests if t.name not in taken and t.name not in chosen]
            good = [t for t in free if t.kind == "discriminating"]
            other = [t for t in free if t.kind != "discriminating"]
            pool = good if (good and (rng.random() < p_good or not other)) else other
            if not pool:
                break
            chosen.append(rng.choice(pool).name)
        return chosen

    def _choose_repair(self, current: int | None, rng: random.Random) -> int:
        options = [o for o in self.bank.repairs if o.number != current] or list(self.bank.repairs)
        correct = [o for o in options if o.correct]
        wrong = [o for o in options if not o.correct]
        pool = correct if (correct and (rng.random() < self.profile.repair_skill or not wrong)) else wrong
        return rng.choice(pool).number

    def _blame(self, view: View, own: Run, call, rng: random.Random, p_good: float):
        option = next((o for o in self.bank.repairs if o.number == view.repair), None)
        repair_wrong = option is not None and not option.correct
        right = rng.random() < self.diagnosis
        blame_repair = (repair_wrong == right) and len(self.bank.repairs) > 1
        if blame_repair or own.status == "error" and not own.failing:
            view.repair = self._choose_repair(view.repair, rng)
            return self._write_repair(view, call, "My repair looks wrong; trying another fix.")
        failing = [n for n in own.failing if n in view.suite] or [rng.choice(view.suite)]
        view.dropped |= set(failing)
        keep = [n for n in view.suite if n not in failing]
        view.suite = keep + (self._pick(view, p_good, rng, 1) if len(keep) < 2 else [])
        return self._write_suite(view, call, f"Dropping {', '.join(failing)}: it fails on my repair.")

    def _apply_feedback(self, request: ModelRequest, view: View, call, rng: random.Random):
        text = next((m.content for m in request.messages if m.role == "user" and m.content.startswith(FEEDBACK_HEADER)), "")
        view.feedback_done = True
        suspects = [n for n in dict.fromkeys(re.findall(r"test_\w+", text)) if n in (view.suite or [])]
        drop = []
        for name in suspects:
            test = self.bank.test(name)
            bad = test is not None and test.kind in ("broken", "overfit")
            diagnosis = min(0.98, max(0.02, self.profile.diagnosis + strategy_effect(
                request.messages, self.context, self.profile) / 2))
            if rng.random() < (diagnosis if bad else 1 - diagnosis):
                drop.append(name)
        view.dropped |= set(drop)
        view.suite = [n for n in view.suite if n not in drop]
        if len(view.suite) < 2:
            p_good = self.profile.base_skill + strategy_effect(request.messages, self.context, self.profile)
            view.suite += self._pick(view, min(0.97, max(0.02, p_good)), rng, 1)
        return self._write_suite(view, call, f"Applying the feedback; dropping {', '.join(drop) or 'nothing'}.")

    def _write_suite(self, view: View, call, why: str):
        return f"{why}\n{_note(view)}", [call("write_file", path=SUITE_FILE, content=self.bank.suite_text(view.suite))]

    def _write_repair(self, view: View, call, why: str = "Writing my repair."):
        option = next(o for o in self.bank.repairs if o.number == view.repair)
        return f"{why}\n{_note(view)}", [call("write_file", path=f"repair/{rel}", content=text)
                                         for rel, text in option.files]


class _Caller:
    """Makes tool calls with deterministic ids."""

    def __init__(self, step: int):
        self.step, self.n = step, 0

    def _id(self) -> str:
        self.n += 1
        return f"sim-{self.step}-{self.n}"

    def __call__(self, name: str, **arguments) -> ToolCall:
        return ToolCall(id=self._id(), name=name, arguments=arguments, raw_arguments=json.dumps(arguments))

    def raw(self, name: str, text: str) -> ToolCall:
        return ToolCall.from_json_text(self._id(), name, text)
