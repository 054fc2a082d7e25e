"""The hook through which a package teaches the simulated models its own requests
(testhelix/llm/sim/contributed.py): loading a role, answering with it in process and in
`testhelix serve`'s role reading, and testhelix never importing the packages that contribute one."""

from __future__ import annotations

import random
import subprocess
import sys
from collections.abc import Sequence

import pytest

from testhelix.core.errors import UserError
from testhelix.llm.base import Message, ModelRequest
from testhelix.llm.provider_protocol import ModelInfo
from testhelix.llm.serve.request_tags import infer_tags
from testhelix.llm.sim import contributed
from testhelix.llm.sim.contributed import UNRECOGNISED, ContributedRoleModel, load_role, role_for
from testhelix.llm.sim.model import infer_role

INFO = ModelInfo(name="sim:strong", provider="sim", model="strong", api="sim", context_window=100_000,
                 max_output_tokens=4096, prices=None)


class Echo:
    """A contributed role: requests that open with `ECHO:`, answered with their text and a seeded draw."""

    name = "echo"

    def recognises(self, messages: Sequence[Message]) -> bool:
        return any(m.role == "user" and m.content.startswith("ECHO:") for m in messages)

    def answer(self, messages: Sequence[Message], rng: random.Random) -> str:
        return f"{messages[-1].content[5:]} {rng.randrange(10**6)}"


ECHO = Echo()
NO_ANSWER = type("NoAnswer", (), {"name": "half", "recognises": lambda self, messages: True})()
ASKED = (Message("system", "You are a helpful assistant."), Message("user", "ECHO:hello"))


def test_a_role_loads_by_dotted_path_and_answers_with_a_seed_of_its_own():
    role = load_role(f"{__name__}:ECHO")
    model = ContributedRoleModel(INFO, seed=3, roles=[role])
    first, again = model.complete(ModelRequest(ASKED)), model.complete(ModelRequest(ASKED))
    assert first.text.startswith("hello ") and first.text == again.text      # one request, one answer
    other_seed = ContributedRoleModel(INFO, seed=4, roles=[role]).complete(ModelRequest(ASKED))
    assert other_seed.text != first.text
    assert first.metadata["simulated"] and first.model == "sim:strong"
    stray = model.complete(ModelRequest((Message("user", "hello"),)))
    assert stray.text == UNRECOGNISED and stray.metadata["simulated"]


def test_a_broken_role_is_refused_naming_what_it_lacks():
    with pytest.raises(UserError, match="lacks answer"):
        load_role(f"{__name__}:NO_ANSWER")
    with pytest.raises(UserError, match="unknown simulated role 'nope'"):
        load_role("nope")
    with pytest.raises(UserError, match="cannot import"):
        load_role("no_such_package.sim:ROLE")


def test_simulated_models_and_serve_read_a_contributed_role_by_its_name(monkeypatch):
    monkeypatch.setattr(contributed, "simulated_roles", lambda: (ECHO,))
    assert role_for(ASKED) is ECHO
    assert infer_role(ASKED) == "echo" and infer_tags(ASKED).role == "echo"
    unknown = (Message("system", "You are a helpful assistant."), Message("user", "hello"))
    assert role_for(unknown) is None and infer_role(unknown) == "other" and infer_tags(unknown).role == "other"


def test_testhelix_models_never_import_a_contributing_package():
    """The simulated models and the server load contributed roles through entry points, on the
    first request no agent role names: importing them imports no autosaddler module."""
    probe = ("import sys, testhelix.llm.serve.server, testhelix.llm.sim.model, testhelix.llm.registry; "
             "print(sorted(m for m in sys.modules if m.startswith('autosaddler')))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
