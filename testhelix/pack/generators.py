"""Candidate generators for `testhelix pack create`: one small seam, two implementations.

A generator answers one request at a time ("an alternative implementation" or "a faulty one") with
one output: a changed copy of a file of the program, or nothing. Every answer is one generated output
and is charged to the task's budget by the caller (panelgate.Budget), whatever happens to it later.
The intent in the request is only a hint: the verifier labels every output (seed 000, Appendix B).

- `OfflineGenerator`: AST rewrites (meant correct) and AST mutations (meant faulty) from mutate.py;
  deterministic for a seed, no model needed. Faulty candidates start from the reference or from an
  alternative already admitted, so invalid candidates inherit the alternatives' variety.
- `ModelGenerator`: asks any chat model of the provider registry (hosted, OpenAI-compatible,
  `local:`) and takes the first fenced Python block of its answer.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, Protocol

from testhelix.llm.base import ChatModel, Message, ModelError, ModelRequest
from testhelix.pack.mutate import mutate, mutation_sites, rewrite

Intent = Literal["alternative", "faulty"]
Files = Mapping[str, str]  # relative path -> text: the files an output changes in the reference tree


@dataclass(frozen=True)
class GenerationRequest:
    """What a generator may see: the public specification, the reference's source files, the valid
    programs admitted so far (reference first) and the target file it should change."""

    task: str
    intent: Intent
    number: int                     # 1-based count of outputs generated for this task so far + 1
    spec: str
    target: str                     # relative path of the file to change
    valid_sources: tuple[str, ...]  # the target file's text in each valid program so far


@dataclass(frozen=True)
class GeneratedOutput:
    """One generated output. `files` is None or empty for an empty submission."""

    files: Files | None
    generator: str
    provenance: str


class CandidateGenerator(Protocol):
    """The seam: a name (recorded with every candidate) and one output per call."""

    name: str

    def generate(self, request: GenerationRequest) -> GeneratedOutput: ...


class OfflineGenerator:
    """AST rewrites and mutations (testhelix/pack/mutate.py), seeded per task and output number."""

    name = "offline"

    def __init__(self, seed: int = 42) -> None:
        self.seed = seed

    def generate(self, request: GenerationRequest) -> GeneratedOutput:
        rng = random.Random(f"{self.seed}:{request.task}:{request.number}:{request.intent}")
        base_index = 0 if request.intent == "alternative" else rng.randrange(len(request.valid_sources))
        base = request.valid_sources[base_index]
        base_name = "the reference" if base_index == 0 else f"valid program #{base_index + 1}"
        if request.intent == "alternative":
            made = rewrite(base, rng)
            if made is None:
                return GeneratedOutput(None, self.name, "no rewrite applies to the reference")
            text, applied = made
            return GeneratedOutput({request.target: text}, self.name,
                                   f"offline rewrite of the reference: {', '.join(applied)}")
        sites = mutation_sites(base)
        if not sites:
            return GeneratedOutput(None, self.name, f"no mutation site in {base_name}")
        site = rng.choice(sites)
        mutant = mutate(base, site)
        if mutant is None:
            return GeneratedOutput(None, self.name, f"mutation {site[0]} did not apply to {base_name}")
        return GeneratedOutput({request.target: mutant}, self.name,
                               f"offline mutation {site[0]} at AST node {site[1]} of {base_name}")


_FENCE = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.S)

_SYSTEM = ("You write Python implementations for a benchmark of test-writing agents. Answer with the complete "
           "new content of the requested file in one ```python fenced block and nothing else.")


def _prompt(request: GenerationRequest) -> str:
    goal = ("Write a DIFFERENT correct implementation: same public behaviour, a different algorithm or structure."
            if request.intent == "alternative" else
            "Write an implementation with one plausible, subtle bug that a careful test could catch "
            "(a realistic mistake, not an obvious sabotage). Do not mark the bug with a comment.")
    return (f"## Specification\n\n{request.spec.strip()}\n\n## Current `{request.target}`\n\n```python\n"
            f"{request.valid_sources[0].rstrip()}\n```\n\n{goal}\nReturn the whole of `{request.target}`.")


class ModelGenerator:
    """One chat completion per output, from any model the provider registry can create."""

    def __init__(self, model: ChatModel, model_name: str, max_output_tokens: int = 4096) -> None:
        self.model, self.model_name, self.max_output_tokens = model, model_name, max_output_tokens
        self.name = f"model:{model_name}"

    def generate(self, request: GenerationRequest) -> GeneratedOutput:
        messages = (Message("system", _SYSTEM), Message("user", _prompt(request)))
        try:
            reply = self.model.complete(ModelRequest(messages, max_output_tokens=self.max_output_tokens))
        except ModelError as err:  # a failed call still produced (nothing): it is charged as an empty output
            return GeneratedOutput(None, self.name, f"model call failed: {type(err).__name__}: {err}")
        found = _FENCE.search(reply.text or "")
        code = found.group(1) if found else ""
        note = " (simulated test double)" if reply.simulated else ""
        if not code.strip():
            return GeneratedOutput(None, self.name, f"{request.intent} asked of {self.model_name}{note}: no code block")
        return GeneratedOutput({request.target: code}, self.name,
                               f"{request.intent} written by {self.model_name}{note}")
