"""A text normaliser judged by a rubric: the example domain of the judged-loss seam (gtdd/domains/judged.py).

Commands, each on a fresh `Normalizer` (method execute(cmd, args), one string argument):
`SPACES text` collapses whitespace runs to one space and trims the ends; `FOLD text` removes
accents (NFKD without combining marks); `TITLE text` title-cases words, keeping small words
(a, an, and, at, for, in, of, on, or, the, to) in lower case after the first. Families: spacing,
accents, titles.

The loss is judged, not exact: the rubric (`RUBRIC`) accepts a reply that differs from the
reference's only in leading or trailing whitespace or, for TITLE, in the case of small words after
the first. The trace executor runs its candidates in the sandbox, as it runs every domain's.
"""

from __future__ import annotations

import random
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gtdd.domains.base import Op, Trace, TraceResult
from gtdd.domains.judged import RubricJudge, judged_first_divergence
from gtdd.domains.textnorm import defects as defects_module

HERE = Path(__file__).parent
COMMANDS = {"SPACES": "spacing", "FOLD": "accents", "TITLE": "titles"}
SMALL = ("a", "an", "and", "at", "for", "in", "of", "on", "or", "the", "to")
WORDS = ("café", "naïve", "Straße", "résumé", "über", "garçon", "Ærø", "crème", "brûlée", "tree", "river", "Lake",
         "NORTH", "old", "song")
GAPS = (" ", "  ", "\t", "\n", " \t ")
MAX_TEXT, MAX_OPS = 200, 6
RUBRIC = ("Acceptable when the reply equals the reference reply after trimming leading and trailing whitespace "
          "of both, and, for TITLE, when they differ only in the case of small words after the first word.")


def _rubric_check(expected: Any, observed: Any) -> bool:
    if not isinstance(expected, str) or not isinstance(observed, str):
        return expected == observed and type(expected) is type(observed)
    e, o = expected.strip(), observed.strip()
    if e == o:
        return True
    ew, ow = e.split(" "), o.split(" ")
    return len(ew) == len(ow) and all(a == b or (i > 0 and a.lower() in SMALL and a.lower() == b.lower())
                                      for i, (a, b) in enumerate(zip(ew, ow)))


JUDGE = RubricJudge("textnorm-rubric", RUBRIC, _rubric_check)


def _reference(ops: Sequence[Op]) -> TraceResult:
    from gtdd.domains.textnorm.reference import Normalizer

    return TraceResult(tuple(Normalizer().execute(op["cmd"], list(op["args"])) for op in ops), None)


class TextNormDomain:
    name = "textnorm"
    families: tuple[str, ...] = ("spacing", "accents", "titles")
    module_name = "normalizer.py"
    entry_class = "Normalizer"
    max_ops = MAX_OPS
    defects = defects_module
    judge = JUDGE
    loss = f"judged: {JUDGE.name}: {RUBRIC}"  # recorded with every commitment

    def __init__(self) -> None:
        self._population: tuple[Trace, ...] | None = None

    def spec(self) -> str:
        return (f"# Text normaliser\n{__doc__.split(chr(10) + chr(10))[1]}\n\nReplies are judged by this rubric: "
                f"{RUBRIC}\n")

    def reference_source(self) -> str:
        return (HERE / "reference.py").read_text()

    def validate(self, ops: Sequence[Op]) -> list[str]:
        if not 1 <= len(ops) <= self.max_ops:
            return [f"a trace has 1 to {self.max_ops} operations, got {len(ops)}"]
        return [f"op {i}: expected one of {sorted(COMMANDS)} with one string of at most {MAX_TEXT} characters"
                for i, op in enumerate(ops)
                if not isinstance(op, dict) or op.get("cmd") not in COMMANDS or not isinstance(op.get("args"), list)
                or len(op["args"]) != 1 or not isinstance(op["args"][0], str) or len(op["args"][0]) > MAX_TEXT]

    def generate(self, rng: random.Random, family: str | None = None) -> Trace:
        family = family or rng.choice(self.families)
        cmd = next(c for c, f in COMMANDS.items() if f == family)
        ops = []
        for _ in range(rng.randint(1, 3)):
            words = [rng.choice(WORDS + SMALL) for _ in range(rng.randint(1, 5))]
            text = rng.choice(("", " ", "\t")) + "".join(w + rng.choice(GAPS) for w in words[:-1]) + words[-1] \
                + rng.choice(("", " ", "\n"))
            ops.append({"cmd": cmd, "args": [unicodedata.normalize(rng.choice(("NFC", "NFD")), text)]})
        return Trace.of(ops, family)

    def population(self) -> tuple[Trace, ...]:
        if self._population is None:
            rng, seen, out = random.Random(20261207), set[str](), list[Trace]()
            while len(out) < 300:
                t = self.generate(rng, self.families[len(out) % 3])
                if t.id not in seen:
                    seen.add(t.id)
                    out.append(t)
            self._population = tuple(out)
        return self._population

    def public_examples(self) -> tuple[Trace, ...]:
        return (Trace.of([{"cmd": "SPACES", "args": ["  old \t song "]}], "spacing"),
                Trace.of([{"cmd": "TITLE", "args": ["the river of song"]}], "titles"))

    def family_of_op(self, op: Op) -> str:
        return COMMANDS[op["cmd"]]

    def reference_results(self, traces: Sequence[Trace]) -> list[TraceResult]:
        return [_reference(t.ops) for t in traces]

    def first_divergence(self, expected: TraceResult, got: TraceResult) -> int | None:
        return judged_first_divergence(JUDGE, expected, got)


DOMAIN = TextNormDomain()
