"""The small vocabulary through which strategy text reaches a simulated model.

A simulated model reads strategy content only from the prompt: the guidance message, the `Do:`
and `Verify:` lines of each rendered lesson (one source per lesson), and the heading (name and
first title line) of each routed skill whose contexts include the task's context (a skill routed to
a context it does not list is read as noise and changes nothing). Each of these *sources* can carry
cues, matched as case-insensitive phrases (`CUES` below). Each cue, its phrases and its effect (per
source; at most two sources count):

- reproduce (reproduce, bug report, exact scenario, expected value): +0.12 chance that a test
  pick is a reproducing test.
- check (verify, run the suite, both programs, passes on the repair, fails on the initial): +0.12
  diagnosis (blaming the right thing) and +0.06 chance of a preferred repair.
- broaden (boundary, edge case, neighbour, regression): one more guard test in each suite (any
  source).
- narrow (minimal, specification fixes, spec over, only what): one guard test fewer (any source);
  guards whose text looks incidental are avoided; a reviewer prompt with this cue reviews with
  +0.10 accuracy.
- messages (error message, exact text, exact message): guards whose text looks incidental are
  preferred (any source).

Nothing else in the strategy text matters to a simulated model, and numbers matter only through
the loop (agentSteps, repairSteps, contextTokens, toolOutputChars, rounds).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from testhelix.llm.base import Message
from testhelix.llm.role_prompts import GUIDANCE_HEADER, SKILLS_HEADER

CUES: dict[str, tuple[str, ...]] = {
    "reproduce": ("reproduce", "bug report", "exact scenario", "expected value"),
    "check": ("verify", "run the suite", "both programs", "passes on the repair", "fails on the initial"),
    "broaden": ("boundary", "edge case", "neighbour", "regression"),
    "narrow": ("minimal", "specification fixes", "spec over", "only what"),
    "messages": ("error message", "exact text", "exact message"),
}
PICK_BOOST = 0.12
DIAGNOSIS_BOOST = 0.12
REPAIR_BOOST = 0.06
REVIEW_BOOST = 0.10
MAX_SOURCES = 2

_SKILL = re.compile(r"^### ([\w-]+) \(contexts: ([^)]*)\)\n(?:#+ ?(.*))?", re.M)
_LESSON = re.compile(r"^- Do: (.*)\n- Verify: (.*)$", re.M)


@dataclass(frozen=True)
class Cues:
    """How many prompt sources carry each cue (capped at MAX_SOURCES)."""

    counts: tuple[tuple[str, int], ...] = ()

    def __getitem__(self, cue: str) -> int:
        return dict(self.counts).get(cue, 0)

    @property
    def pick_boost(self) -> float:
        return PICK_BOOST * self["reproduce"]

    @property
    def diagnosis_boost(self) -> float:
        return DIAGNOSIS_BOOST * self["check"]

    @property
    def repair_boost(self) -> float:
        return REPAIR_BOOST * self["check"]

    @property
    def extra_guards(self) -> int:
        return int(self["broaden"] > 0) - int(self["narrow"] > 0)


def _sources(messages: tuple[Message, ...], context: str) -> list[str]:
    system = next((m.content for m in messages if m.role == "system"), "")
    users = [m.content for m in messages if m.role == "user"]
    sources = [u.split("\n", 1)[1] if "\n" in u else "" for u in users if u.startswith(GUIDANCE_HEADER)]
    for text in users:
        sources += [f"{do} {verify}" for do, verify in _LESSON.findall(text)]
    if SKILLS_HEADER in system:
        for name, contexts, title in _SKILL.findall(system):
            if context in [c.strip() for c in contexts.split(",")]:
                sources.append(f"{name.replace('-', ' ')} {title}")
    return sources


def read_cues(messages: tuple[Message, ...], context: str) -> Cues:
    sources = [s.lower() for s in _sources(messages, context)]
    counts = {cue: min(MAX_SOURCES, sum(1 for s in sources if any(p in s for p in phrases)))
              for cue, phrases in CUES.items()}
    return Cues(tuple(sorted((k, v) for k, v in counts.items() if v)))
