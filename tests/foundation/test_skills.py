"""The bundled skills library (skills/<name>/SKILL.md) and the loader's rules and routing."""

import re
from types import SimpleNamespace

import pytest

from testhelix.core.agent_roles import GENERATION_ROLES
from testhelix.core.errors import UserError
from testhelix.strategy.model import Strategy
from testhelix.strategy.skills import (
    library_index,
    load_library,
    parse_skill,
    reviewer_skills,
    route_skills,
)
from testhelix.tasks.model import CONTEXTS

EXPECTED = {
    "reproduce-from-report", "boundary-values", "spec-over-implementation", "error-paths",
    "stateful-sequences", "framework-contracts", "cli-behaviour", "exact-text-output",
    "complexity-counters", "differential-challenge", "minimal-repair", "suite-review",
}


@pytest.fixture(scope="module")
def library():
    return load_library()


def routes(**by_context):
    """A strategy-like object carrying only skillRoutes.

    Built without validation on purpose: the Strategy model already refuses reviewer-only routes,
    and these tests check that route_skills keeps refusing them even when handed such a route.
    """
    return SimpleNamespace(skillRoutes={ctx: tuple(names) for ctx, names in by_context.items()})


# --- the bundled library -------------------------------------------------------------------------

def test_library_has_exactly_the_twelve_curated_skills(library):
    assert set(library) == EXPECTED
    assert len(library) == 12


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_body_has_40_to_150_lines(library, name):
    assert 40 <= len(library[name].body.splitlines()) <= 150


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_description_is_one_sentence_saying_when_to_load(library, name):
    desc = library[name].description
    assert "\n" not in desc and desc.endswith(".")
    assert desc.startswith("Load ")
    assert not re.search(r"[.!?]\s", desc[:-1]), "more than one sentence"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_no_fenced_code_block_longer_than_a_few_lines(library, name):
    blocks = re.findall(r"^```[^\n]*\n(.*?)^```", library[name].body, re.S | re.M)
    assert all(len(block.splitlines()) <= 5 for block in blocks)


def test_every_context_is_covered_by_a_skill_generation_may_load(library):
    open_skills = [s for s in library.values() if not s.reviewer_only]
    for context in CONTEXTS:
        assert any(context in s.contexts for s in open_skills), context


def test_suite_review_is_the_reviewer_only_skill(library):
    reviewer_only = {s.name for s in library.values() if s.reviewer_only}
    assert reviewer_only == {"suite-review"}
    assert library["suite-review"].roles == ("review",)


def test_roles_the_brief_fixes(library):
    assert set(library["differential-challenge"].roles) == {"challenge", "feedback"}
    assert library["minimal-repair"].roles == ("repair",)


def test_reviewer_loads_suite_review_in_every_context(library):
    for context in CONTEXTS:
        names = {s.name for s in reviewer_skills(library, context)}
        assert "suite-review" in names
        assert all("review" in library[n].roles for n in names)


# --- routing -------------------------------------------------------------------------------------

def test_route_returns_skills_in_route_order(library):
    order = ("minimal-repair", "boundary-values", "reproduce-from-report")
    chosen = route_skills(routes(algorithm=order), "algorithm", "generation", library)
    assert [s.name for s in chosen] == list(order)


def test_route_is_per_context(library):
    strategy = routes(cli=("cli-behaviour",), visual=("exact-text-output",))
    assert [s.name for s in route_skills(strategy, "visual", "generation", library)] == ["exact-text-output"]
    assert route_skills(strategy, "stateful", "generation", library) == []


@pytest.mark.parametrize("role", GENERATION_ROLES)
def test_reviewer_only_skill_is_refused_for_every_generation_role(library, role):
    strategy = routes(general=("reproduce-from-report", "suite-review"))
    with pytest.raises(UserError, match="suite-review"):
        route_skills(strategy, "general", role, library)


def test_reviewer_only_skill_may_reach_the_review_role(library):
    chosen = route_skills(routes(general=("suite-review",)), "general", "review", library)
    assert [s.name for s in chosen] == ["suite-review"]


def test_unknown_routed_skill_is_a_user_error(library):
    with pytest.raises(UserError, match="no-such-skill"):
        route_skills(routes(general=("no-such-skill",)), "general", "generation", library)


def test_empty_route_list_gives_no_skills_and_an_index_without_reviewer_skills(library):
    assert route_skills(routes(general=()), "general", "generation", library) == []
    assert route_skills(routes(), "general", "generation", library) == []
    index = library_index(library, "generation")
    listed = {line.removeprefix("- ").split(":", 1)[0] for line in index.splitlines()}
    assert listed == EXPECTED - {"suite-review"}
    assert "suite-review" in library_index(library, "review")


def test_strategy_model_accepts_routes_into_the_real_library():
    strategy = Strategy(skillRoutes={"cli": ("cli-behaviour", "exact-text-output", "error-paths")})
    chosen = route_skills(strategy, "cli", "generation", load_library())
    assert [s.name for s in chosen] == ["cli-behaviour", "exact-text-output", "error-paths"]


# --- malformed SKILL.md files (in a temporary library) --------------------------------------------

GOOD_META = """name: {name}
description: Load for testing the loader.
contexts: [general]
roles: [generation]
reviewer_only: false"""


def write_skill(root, folder, meta=None, body_lines=40, raw=None):
    path = root / folder / "SKILL.md"
    path.parent.mkdir(parents=True)
    body = "\n".join(f"line {i}" for i in range(body_lines))
    meta = GOOD_META.format(name=folder) if meta is None else meta
    path.write_text(raw if raw is not None else f"---\n{meta}\n---\n{body}\n")
    return path


def problem_fields(err: UserError) -> set[str]:
    return {field for field, _ in err.problems}


def test_a_well_formed_skill_loads(tmp_path):
    write_skill(tmp_path, "tidy")
    skill = load_library(tmp_path)["tidy"]
    assert skill.contexts == ("general",) and skill.roles == ("generation",) and not skill.reviewer_only


def test_missing_front_matter(tmp_path):
    write_skill(tmp_path, "bare", raw="# A title\n" + "text\n" * 50)
    with pytest.raises(UserError, match="front matter"):
        load_library(tmp_path)


def test_front_matter_that_is_not_yaml(tmp_path):
    write_skill(tmp_path, "broken", meta="name: broken\ncontexts: [general\nroles: {oops")
    with pytest.raises(UserError, match="YAML"):
        load_library(tmp_path)


def test_unknown_context(tmp_path):
    meta = GOOD_META.format(name="odd").replace("[general]", "[general, gui]")
    write_skill(tmp_path, "odd", meta=meta)
    with pytest.raises(UserError) as err:
        load_library(tmp_path)
    assert problem_fields(err.value) == {"contexts"}
    assert "gui" in err.value.render()


def test_name_not_matching_folder(tmp_path):
    write_skill(tmp_path, "folder-name", meta=GOOD_META.format(name="other-name"))
    with pytest.raises(UserError) as err:
        load_library(tmp_path)
    assert problem_fields(err.value) == {"name"}
    assert "folder-name" in err.value.render()


@pytest.mark.parametrize("lines, ok", [(39, False), (40, True), (150, True), (151, False)])
def test_body_length_limits(tmp_path, lines, ok):
    path = write_skill(tmp_path, "sized", body_lines=lines)
    if ok:
        assert len(parse_skill(path).body.splitlines()) == lines
    else:
        with pytest.raises(UserError) as err:
            parse_skill(path)
        assert problem_fields(err.value) == {"body"}


@pytest.mark.parametrize("field, old, new", [
    ("roles", "[generation]", "[writing]"),
    ("roles", "[generation]", "[]"),
    ("contexts", "[general]", "[]"),
    ("description", "Load for testing the loader.", "''"),
    ("reviewer_only", "false", "'maybe'"),
])
def test_other_bad_fields_are_named(tmp_path, field, old, new):
    write_skill(tmp_path, "flawed", meta=GOOD_META.format(name="flawed").replace(old, new))
    with pytest.raises(UserError) as err:
        load_library(tmp_path)
    assert problem_fields(err.value) == {field}


def test_missing_library_folder(tmp_path):
    with pytest.raises(UserError, match="does not exist"):
        load_library(tmp_path / "nowhere")
