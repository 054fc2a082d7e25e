"""`testhelix plugin check` and `gtdd plugin check`: the sample plug-in passes for each kind; a plug-in
that lacks a member, judges wrongly, lacks its credential or whose reference disagrees with itself
fails with exit 1; a name that does not load exits 2."""

from __future__ import annotations

import sys
import types
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from gtdd.cli import main as gtdd_main
from gtdd.domains.base import Trace, TraceResult
from testhelix.commands.cli import main as helix_main
from testhelix.execution.outcome import Limits, Outcome


def cli(main: Any, args: Sequence[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as done:
        main(list(args))
    captured = capsys.readouterr()
    return int(done.value.code or 0), captured.out, captured.err


def lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith(("ok", "FAIL"))]


@pytest.mark.slow
@pytest.mark.parametrize("kind, name", [("executor", "sample"), ("sandbox", "sample_plugin.sandbox:MarkedPlainSandbox")])
def test_the_sample_executor_and_sandbox_conform(sample_plugin: Path, capsys: pytest.CaptureFixture[str],
                                                 kind: str, name: str) -> None:
    code, out, _ = cli(helix_main, ["plugin", "check", kind, name], capsys)
    assert code == 0, out
    checked = lines(out)
    assert all(line.startswith("ok") for line in checked), out
    for status in ("pass", "fail", "error"):
        assert any(line.endswith(f"is {status}: got {status}") or f"is {status}: got {status} (" in line
                   for line in checked), out
    assert out.rstrip().endswith("conforms")


def test_the_sample_provider_conforms_with_its_credential_and_fails_without(
        sample_plugin: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SAMPLE_PLUGIN_API_KEY", "not-a-real-key")
    code, out, _ = cli(helix_main, ["plugin", "check", "provider", "sample", "--model", "strong"], capsys)
    assert code == 0 and all(line.startswith("ok") for line in lines(out)), out
    assert "answer a request with a Completion" in out and "marked simulated: simulated" in out
    monkeypatch.delenv("SAMPLE_PLUGIN_API_KEY")
    code, out, _ = cli(helix_main, ["plugin", "check", "provider", "sample_plugin.provider:PROVIDER",
                                    "--model", "strong"], capsys)
    assert code == 1 and "FAIL  create a model: ModelAuthError" in out and "SAMPLE_PLUGIN_API_KEY" in out, out


def test_the_sample_domain_and_the_bundled_one_conform(sample_plugin: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("counter", "kvstore"):
        code, out, _ = cli(gtdd_main, ["plugin", "check", name], capsys)
        assert code == 0 and all(line.startswith("ok") for line in lines(out)), out
        assert "the reference, run in isolation, agrees with its trusted results" in out


def test_gtdd_check_runs_the_reference_in_the_sandbox_it_is_given(
        sample_plugin: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The sample sandbox serves GTDD's path too; one whose launcher cannot start fails the check,
    # which shows the option reaches the isolation (a launcher imports it from its folder).
    code, out, _ = cli(gtdd_main, ["plugin", "check", "counter", "--sandbox",
                                   "sample_plugin.sandbox:MarkedPlainSandbox"], capsys)
    assert code == 0 and "sandbox 'sample-plain'" in out, out
    (tmp_path / "unlaunchable_sandbox.py").write_text(
        "from testhelix.execution.sandbox import PlainSandbox\n\n"
        "class Unlaunchable(PlainSandbox):\n    kind = 'unlaunchable'\n\n"
        "    def launch_prefix(self):\n        return ['false']\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    code, out, _ = cli(gtdd_main, ["plugin", "check", "counter", "--sandbox", "unlaunchable_sandbox:Unlaunchable"],
                       capsys)
    assert code == 1 and "FAIL  the reference run in the sandbox" in out, out


class AlwaysPasses:
    """An executor that answers `pass` whatever it runs: it has every member, and judges wrongly."""

    runner_version = "always-passes-1"

    def __init__(self, workers: int | None = None, cache: object = None, sandbox: str | None = None) -> None:
        self.workers = 1

    def prepare(self, folders: Sequence[Path]) -> None:
        pass

    def run(self, suite_dir: Path, program_dir: Path, limits: Limits = Limits(), coverage: bool = False) -> Outcome:
        return Outcome("pass", None, 1, 0.0, "")

    def run_many(self, jobs: Sequence[tuple[Path, Path]], limits: Limits = Limits(),
                 coverage: bool = False) -> list[Outcome]:
        return [self.run(s, p, limits) for s, p in jobs]

    def run_repeat(self, suite_dir: Path, program_dir: Path, limits: Limits, repetition: int) -> Outcome:
        return self.run(suite_dir, program_dir, limits)

    def close(self) -> None:
        pass

    def __enter__(self) -> AlwaysPasses:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


# The same without run_repeat: a member of the Executor protocol is missing.
LacksRunRepeat = type("LacksRunRepeat", (), {k: v for k, v in vars(AlwaysPasses).items() if k != "run_repeat"})


@pytest.fixture
def broken(sample_plugin: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    from sample_plugin.counter import CounterDomain

    class WrongReference(CounterDomain):
        def reference_results(self, traces: Sequence[Trace]) -> list[TraceResult]:  # every reply off by one
            return [TraceResult(tuple(r + 1 if isinstance(r, int) else r for r in res.replies), res.error)
                    for res in super().reference_results(traces)]

    module = types.ModuleType("broken_plugins")
    module.AlwaysPasses, module.LacksRunRepeat = AlwaysPasses, LacksRunRepeat  # type: ignore[attr-defined]
    module.WRONG = WrongReference()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "broken_plugins", module)
    return "broken_plugins"


def test_an_executor_that_judges_wrongly_fails(broken: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(helix_main, ["plugin", "check", "executor", f"{broken}:AlwaysPasses"], capsys)
    assert code == 1 and out.rstrip().endswith("FAILED"), out
    assert "FAIL  executor broken_plugins:AlwaysPasses: a failing suite is fail: got pass" in out
    assert "ok    executor broken_plugins:AlwaysPasses: a passing suite is pass: got pass" in out


def test_an_executor_without_a_protocol_member_fails(broken: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(helix_main, ["plugin", "check", "executor", f"{broken}:LacksRunRepeat"], capsys)
    assert code == 1 and "FAIL  executor declares every Executor member: lacks run_repeat" in out, out


def test_a_domain_whose_reference_disagrees_with_itself_fails(broken: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(gtdd_main, ["plugin", "check", f"{broken}:WRONG"], capsys)
    assert code == 1 and "FAIL  the reference, run in isolation, agrees with its trusted results: diverges" in out


class ClaimsEverything:
    """A simulated role that answers every request and takes an agent role's name: both fail."""

    name = "review"

    def recognises(self, messages: Sequence[Any]) -> bool:
        return True

    def answer(self, messages: Sequence[Any], rng: Any) -> str:
        return "{}"


@pytest.mark.parametrize("name", ["optimizer", "selection", "reflection"])
def test_autosaddlers_simulated_roles_conform(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(helix_main, ["plugin", "check", "simulated-role", name], capsys)
    assert code == 0 and all(line.startswith("ok") for line in lines(out)), out
    assert f"its name is its own (no agent role's): '{name}'" in out and out.rstrip().endswith("conforms")


def test_a_simulated_role_that_claims_every_request_fails(capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    module = types.ModuleType("greedy_roles")
    module.GREEDY = ClaimsEverything()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "greedy_roles", module)
    code, out, _ = cli(helix_main, ["plugin", "check", "simulated-role", "greedy_roles:GREEDY"], capsys)
    assert code == 1 and out.rstrip().endswith("FAILED"), out
    assert "FAIL  its name is its own (no agent role's): 'review'" in out
    assert "FAIL  it does not claim a request that is not its package's: returned True" in out


@pytest.mark.parametrize("main, args, message", [
    (helix_main, ["plugin", "check", "executor", "nope"], "unknown executor 'nope'"),
    (helix_main, ["plugin", "check", "provider", "nope.module:X"], "cannot import 'nope.module'"),
    (helix_main, ["plugin", "check", "sandbox", "nope"], "unknown sandbox 'nope'"),
    (helix_main, ["plugin", "check", "simulated-role", "os:getcwd"], "lacks name, recognises, answer"),
    (helix_main, ["plugin", "check", "kind-that-is-not", "x"], "'kind-that-is-not' is not one of 'executor'"),
    (helix_main, ["plugin", "check", "executor", "sample", "--model", "x"], "--model is for providers only"),
    (gtdd_main, ["plugin", "check", "nope"], "unknown domain 'nope'"),
    (gtdd_main, ["plugin", "check", "counter", "--sandbox", "nope"], "unknown sandbox 'nope'"),
])
def test_a_name_that_does_not_load_exits_2(sample_plugin: Path, capsys: pytest.CaptureFixture[str], main: Any,
                                           args: list[str], message: str) -> None:
    code, _, err = cli(main, args, capsys)
    assert code == 2 and message in err and "Traceback" not in err, err
