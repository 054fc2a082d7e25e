"""The simulated tool-using agent: one decision per call, derived from the visible transcript only.

The policy keeps no state between calls. Everything it knows comes from the messages it is sent:
its own earlier notes (a `state:` line in its replies: which bank tests are in the suite, which
repair option is in repair/, which tests it dropped) and the observations still visible. When the
loop trims the context, elided observations are forgotten (a run is repeated, a failing test may
be picked again) -- so `contextTokens` has a real effect, as do `agentSteps` / `repairSteps` (more
chances to correct itself) and the strategy text in the prompt (the cues of cues.py).

Its private knowledge is the task's bank (bank.py): candidate tests and candidate repairs, with
what running them on the initial program and on each other shows. Each step, in order: read back
unknown state (repair rounds), look around (wasted steps, more often for less efficient
profiles), write the suite (one reproducing test, then guards), write a repair (a preferred one
with probability `repair_skill`), apply feedback, run on the initial program, fix a suite that
does not fail there, run on the own repair, blame the repair or the failing tests (the choice the
runs support with probability `diagnosis`), and submit once the suite fails on the initial
program and passes on the repair.

Independent sessions never write byte-identical files: the repair carries a comment naming the
session's direction (public prompt text), so two pairs that choose the same fix still have
distinct repair digests, as two real sessions would.
"""

from __future__ import annotations

import json
import re
from collections.abc import Set
from dataclasses import dataclass, field

from testhelix.llm.base import ModelRequest, ToolCall
from testhelix.llm.role_prompts import FEEDBACK_HEADER
from testhelix.llm.sim.bank import REPAIR_NOTE, SimBank
from testhelix.llm.sim.cues import Cues, read_cues
from testhelix.llm.sim.draws import Draws
from testhelix.llm.sim.profiles import SimProfile

SUITE_FILE = "suite/test_reproduction.py"
_NOTE = re.compile(r"^state: (.*)$", re.M)
_FAILED = re.compile(r"(?:FAILED|ERROR)\s+\S*?::(test_\w+)")
_RUN_HEAD = re.compile(r"^suite on (initial|repair) program: (pass|fail|error)")
_DEF = re.compile(r"^def (test_\w+)\(", re.M)
_DIRECTION = re.compile(r"^Your direction for this attempt: (.*)$", re.M)
CHALLENGE = "Differential challenge:"


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

    def known_suite(self) -> list[str]:
        """The suite, for the decisions made once it is known (the first step reads it back)."""
        if self.suite is None:
            raise RuntimeError("simulated agent: a decision on the suite before it was read back")
        return self.suite


def _note(view: View) -> str:
    return (f"state: suite={','.join(view.suite or [])} | repair={view.repair} | "
            f"drop={','.join(sorted(view.dropped))} | fb={int(view.feedback_done)}")


def _parse_note(text: str, view: View) -> bool:
    notes = list(_NOTE.finditer(text or ""))
    if not notes:
        return False
    m = notes[-1]                      # the latest state note wins
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
                view.repair, view.runs = bank.repair_number(path[len("repair/"):], msg.content), []
        elif call.name == "read_file" and str(args.get("path", "")) == SUITE_FILE:
            view.suite, view.runs = [], []          # no suite file yet
    return view


@dataclass(frozen=True)
class _Turn:
    """What one decision (one reply) works with: its keyed draws and the cue-adjusted chances.
    Built per call, so concurrent pairs sharing the policy never share it."""

    draws: Draws
    cues: Cues
    p_good: float
    diagnosis: float
    direction: str


class SimAgentPolicy:
    def __init__(self, profile: SimProfile, bank: SimBank, context: str, package_files: tuple[str, ...]):
        self.profile, self.bank, self.context, self.package_files = profile, bank, context, package_files

    def decide(self, request: ModelRequest, phase: str, draws: Draws) -> tuple[str, list[ToolCall]]:
        p, view = self.profile, read_view(request, self.bank, phase)
        call = _Caller(sum(1 for m in request.messages if m.role == "assistant"))
        if draws.below(p.malformed_rate, "malformed"):
            return "Writing the file.", [call.raw("write_file", '{"path": "suite/x.py", "content": "oops')]
        if view.suite is None:
            return "Reading my earlier suite back.", [call("read_file", path=SUITE_FILE)]
        if view.repair is None:
            target = self.bank.repairs[0].files[0][0] if self.bank.repairs else self.package_files[0]
            return "Reading my earlier repair back.", [call("read_file", path=f"repair/{target}")]
        if view.looked < 2 and not draws.below(p.step_efficiency, "look"):
            target = draws.choice(("program", *[f"program/{f}" for f in self.package_files]), "look")
            name = "list_files" if target == "program" else "read_file"
            return "Looking at the program first.", [call(name, path=target)]
        cues = read_cues(request.messages, self.context)
        direction = next(iter(_DIRECTION.findall(next((m.content for m in request.messages if m.role == "user"), ""))), "")
        turn = _Turn(draws, cues, _clip(p.base_skill + cues.pick_boost), _clip(p.diagnosis + cues.diagnosis_boost),
                     direction)
        if not view.suite:
            view.suite = self._compose(view, turn)
            text, calls = self._write_suite(view, call, "Writing a suite that reproduces the report.")
            if view.repair == 0 and self.bank.repairs and draws.below(p.step_efficiency, "both-at-once"):
                view.repair = self._choose_repair(None, turn, "first")     # an efficient model writes both at once
                text, more = self._write_repair(view, call, direction)
                calls += more
            return text, calls
        if phase == "repair" and not view.feedback_done:
            return self._apply_feedback(request, view, call, turn)
        if view.repair == 0 and self.bank.repairs:
            view.repair = self._choose_repair(None, turn, "first")
            return self._write_repair(view, call, direction)
        initial = next((r for r in reversed(view.runs) if r.program == "initial"), None)
        if initial is None:
            return "Running the suite on the initial program.", [call("run_tests", program="initial")]
        if initial.status != "fail":
            bad = [n for n in initial.failing if n in view.suite] if initial.status == "error" else []
            keep = [n for n in view.suite if n not in bad]
            if initial.status == "pass" and len(keep) >= p.tests_per_suite + 2:
                keep.remove(draws.choice(keep, "trim"))
            view.dropped |= set(bad)
            view.suite = keep + self._pick(view, turn, "reproduces", ("fix-initial",), exclude=set(keep))
            return self._write_suite(view, call, "The suite does not fail on the initial program; adding a test.")
        own = next((r for r in reversed(view.runs) if r.program == "repair"), None)
        if own is None:
            return "Running the suite on my repair.", [call("run_tests", program="repair")]
        if own.status == "pass":
            return "The suite fails on the initial program and passes on my repair.", [call("submit", summary="done")]
        return self._blame(view, own, call, turn)

    # --- decisions ---------------------------------------------------------------------------
    def _compose(self, view: View, turn: _Turn) -> list[str]:
        """One reproducing test, then guards: `tests_per_suite - 1`, one more or fewer by cue. Each
        slot has its own draw, so an extra guard leaves the others as they were."""
        suite = self._pick(view, turn, "reproduces", ("compose", 0))
        for slot in range(1, max(1, self.profile.tests_per_suite + turn.cues.extra_guards)):
            suite += self._pick(view, turn, "guard", ("compose", slot), exclude=set(suite))
        return suite

    def _pick(self, view: View, turn: _Turn, want: str, slot: tuple, exclude: Set[str] = frozenset()) -> list[str]:
        """One test of role `want` with probability p_good, else any other free test."""
        taken = set(view.suite or ()) | set(exclude) | view.dropped
        free = [t for t in self.bank.tests if t.name not in taken]
        target = [t for t in free if self.bank.role(t.name) == want]
        if want == "guard" and target:
            plain = [t for t in target if not t.incidental]
            loud = [t for t in target if t.incidental]
            if turn.cues["narrow"] and plain:
                target = plain
            elif turn.cues["messages"] and loud:
                target = loud
        other = [t for t in free if t not in target]
        pool = target if target and (not other or turn.draws.below(turn.p_good, "pick", *slot)) else other
        return [turn.draws.choice(pool, "pick", *slot).name] if pool else []

    def _choose_repair(self, current: int | None, turn: _Turn, why: str) -> int:
        options = [o for o in self.bank.repairs if o.number != current] or list(self.bank.repairs)
        preferred = [o for o in options if o.number in self.bank.preferred]
        rest = [o for o in options if o.number not in self.bank.preferred]
        chance = _clip(self.profile.repair_skill + turn.cues.repair_boost)
        pool = preferred if (preferred and (not rest or turn.draws.below(chance, "repair", why))) else rest
        return turn.draws.choice(pool, "repair", why).number

    def _blame(self, view: View, own: Run, call: _Caller, turn: _Turn) -> tuple[str, list[ToolCall]]:
        """The suite fails on the own repair: the runs point at the repair when it is not a
        preferred one and the failing tests pass on a preferred repair; else at the tests."""
        suite = view.known_suite()
        failing = [n for n in own.failing if n in suite]
        mine_preferred = view.repair in self.bank.preferred
        tests_look_right = bool(failing) and all(self.bank.role(n) != "suspect" for n in failing)
        repair_at_fault = (not mine_preferred and tests_look_right) or (own.status == "error" and not failing)
        if not turn.draws.below(turn.diagnosis, "diagnosis"):
            repair_at_fault = not repair_at_fault
        if repair_at_fault and len(self.bank.repairs) > 1:
            view.repair = self._choose_repair(view.repair, turn, "another")
            return self._write_repair(view, call, turn.direction, "My repair looks wrong; trying another fix.")
        failing = failing or [turn.draws.choice(suite, "blame")]
        view.dropped |= set(failing)
        view.suite = [n for n in suite if n not in failing]
        if not any(self.bank.role(n) == "reproduces" for n in view.suite):
            view.suite += self._pick(view, turn, "reproduces", ("refill",))
        return self._write_suite(view, call, f"Dropping {', '.join(failing)}: it fails on my repair.")

    def _apply_feedback(self, request: ModelRequest, view: View, call: _Caller, turn: _Turn) -> tuple[str, list[ToolCall]]:
        text = next((m.content for m in request.messages if m.role == "user" and m.content.startswith(FEEDBACK_HEADER)), "")
        view.feedback_done = True
        suite = view.known_suite()
        suspects = [n for n in dict.fromkeys(re.findall(r"test_\w+", text)) if n in suite]
        drop = []
        for name in suspects:
            test = self.bank.test(name)
            # What the own runs support: a test that reproduces the report and reads as plain
            # behaviour stays (the peer's repair may be the wrong one); anything else goes.
            sound = self.bank.role(name) == "reproduces" and test is not None and not test.incidental
            if turn.draws.below(turn.diagnosis, "feedback", name) != sound:
                drop.append(name)
        view.dropped |= set(drop)
        view.suite = [n for n in suite if n not in drop]
        added = []
        if not any(self.bank.role(n) == "reproduces" for n in view.suite):
            added += self._pick(view, turn, "reproduces", ("feedback",))
        if CHALLENGE in text:
            added += self._separating(view, turn, exclude=set(added))
        view.suite += added
        return self._write_suite(view, call, f"Applying the feedback; dropping {', '.join(drop) or 'nothing'}"
                                 + (f", adding {', '.join(added)}." if added else "."))

    def _separating(self, view: View, turn: _Turn, exclude: set[str]) -> list[str]:
        """For a differential challenge: a guard that some non-preferred candidate repair fails,
        i.e. a behaviour on which the candidate repairs differ."""
        taken = set(view.suite or ()) | exclude | view.dropped
        all_repairs = {o.number for o in self.bank.repairs}
        pool = [t for t in self.bank.tests if t.name not in taken and self.bank.role(t.name) == "guard"
                and not all_repairs <= t.passes]
        if pool and turn.draws.below(turn.p_good, "challenge"):
            return [turn.draws.choice(pool, "challenge").name]
        return self._pick(view, turn, "guard", ("challenge",), exclude)

    def _write_suite(self, view: View, call: _Caller, why: str) -> tuple[str, list[ToolCall]]:
        return f"{why}\n{_note(view)}", [call("write_file", path=SUITE_FILE, content=self.bank.suite_text(view.known_suite()))]

    def _write_repair(self, view: View, call: _Caller, direction: str,
                      why: str = "Writing my repair.") -> tuple[str, list[ToolCall]]:
        option = next(o for o in self.bank.repairs if o.number == view.repair)
        note = f"{REPAIR_NOTE}{direction or 'the reported bug'}\n"
        calls = [call("write_file", path=f"repair/{rel}", content=text + ("" if text.endswith("\n") else "\n") + note)
                 for rel, text in option.files]
        return f"{why}\n{_note(view)}", calls


def _clip(p: float) -> float:
    return min(0.98, max(0.02, p))


class _Caller:
    """Makes tool calls with deterministic ids."""

    def __init__(self, step: int):
        self.step, self.n = step, 0

    def _id(self) -> str:
        self.n += 1
        return f"sim-{self.step}-{self.n}"

    def __call__(self, name: str, **arguments: str) -> ToolCall:
        return ToolCall(id=self._id(), name=name, arguments=arguments, raw_arguments=json.dumps(arguments))

    def raw(self, name: str, text: str) -> ToolCall:
        return ToolCall.from_json_text(self._id(), name, text)
