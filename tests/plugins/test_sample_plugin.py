"""A package outside the project adds a model provider, an executor, a sandbox and a GTDD domain,
and the commands use each by entry-point name and by dotted path (tests/plugins/sample_plugin)."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from autosaddler.cli import main as autosaddler_main
from gtdd.cli import main as gtdd_main
from testhelix.commands.cli import main as helix_main
from testhelix.store.runstore import RunStore

ROOT = Path(__file__).resolve().parents[2]
TASK = ROOT / "tests" / "fixtures" / "tasks" / "pack" / "fx-clamp-m01"
GROUPS = ("testhelix.providers", "testhelix.executors", "testhelix.sandboxes", "gtdd.domains")


def cli(main, args, capsys) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as done:
        main([str(a) for a in args])
    captured = capsys.readouterr()
    code = done.value.code
    assert isinstance(code, int), code  # the entry point always exits with a number
    return code, captured.out, captured.err


def test_the_entry_points_found_are_the_ones_the_pyproject_declares(sample_plugin):
    declared = tomllib.loads((sample_plugin / "pyproject.toml").read_text())["project"]["entry-points"]
    found = {g: {ep.name: ep.value for ep in entry_points(group=g) if ep.dist and ep.dist.name == "sample-plugin"}
             for g in GROUPS}
    assert found == {g: declared[g] for g in GROUPS}


@pytest.mark.usefixtures("sample_plugin")  # the name is the package's below, not the fixture's folder
def test_each_kind_loads_by_entry_point_and_by_dotted_path():
    import sample_plugin.counter
    import sample_plugin.executor

    from gtdd.domains import get_domain
    from testhelix.execution.seam import create_executor, select_sandbox
    from testhelix.llm.registry import credential_env_vars, model_ref

    assert model_ref("sample:strong").info.provider == "sample"
    assert model_ref("sample_plugin.provider:PROVIDER/weak").info.model == "weak"
    assert "SAMPLE_PLUGIN_API_KEY" in credential_env_vars()  # declared by the plug-in, no project edit
    for spec in ("sample", "sample_plugin.executor:SubprocessExecutor"):
        with create_executor(spec, workers=1) as executor:  # behind the seam's outcome cache
            assert isinstance(executor.inner, sample_plugin.executor.SubprocessExecutor)
    for spec in ("sample", "sample_plugin.sandbox:MarkedPlainSandbox"):
        sandbox = select_sandbox(spec)
        assert sandbox.kind == "sample-plain" and sandbox.spec == spec
    assert get_domain("counter") is get_domain("sample_plugin.counter:DOMAIN") is sample_plugin.counter.DOMAIN


BAD: list[tuple[Callable[[list[str] | None], None], list[str | Path], str]] = [
    (helix_main, ["evaluate", "--task", TASK, "--suite", TASK / "tests", "--executor", "nope"],
     "--executor: unknown executor 'nope'; known: forkserver, sample"),
    (helix_main, ["evaluate", "--task", TASK, "--suite", TASK / "tests", "--executor", "sample_plugin.nope:X"],
     "--executor 'sample_plugin.nope:X': cannot import 'sample_plugin.nope'"),
    (helix_main, ["run", "--pack", TASK.parent, "--split", "all", "--config", "A", "--model", "sim:strong",
                      "--run", "{tmp}/r", "--executor", "sample_plugin.executor:Missing"],
     "has no attribute 'Missing'"),
    (helix_main, ["pack", "verify", TASK.parent, "--sandbox", "nope"],
     "--sandbox: unknown sandbox 'nope'; known: namespaced, plain, sample"),
    (helix_main, ["run", "--pack", TASK.parent, "--split", "all", "--config", "A", "--model", "nope:x",
                      "--run", "{tmp}/r"], "unknown model 'nope:x'"),
    (helix_main, ["run", "--pack", TASK.parent, "--split", "all", "--config", "A", "--model",
                      "sample_plugin.provider:NOPE/strong", "--run", "{tmp}/r"], "has no attribute 'NOPE'"),
    (autosaddler_main, ["gate", "--sandbox", "no_such_pkg.mod:Sandbox"], "cannot import 'no_such_pkg.mod'"),
    (gtdd_main, ["run", "--policy", "public-only", "--domain", "nope", "--run", "{tmp}/g"],
     "--domain: unknown domain 'nope'; known: kvstore, counter"),
    (gtdd_main, ["run", "--policy", "public-only", "--domain", "sample_plugin.counter:NOPE", "--run", "{tmp}/g"],
     "has no attribute 'NOPE'"),
]


@pytest.mark.parametrize("main,args,message", BAD, ids=[" ".join(map(str, b[1][:1] + b[1][-2:])) for b in BAD])
def test_an_unknown_name_or_a_path_that_does_not_resolve_exits_2(sample_plugin, tmp_path, capsys, main, args, message):
    code, _, err = cli(main, [str(a).replace("{tmp}", str(tmp_path)) for a in args], capsys)
    assert code == 2 and message in err and "Traceback" not in err, err


@pytest.mark.slow
def test_an_executor_plugin_judges_a_suite_like_the_fork_server_pool(sample_plugin, tmp_path, capsys, monkeypatch):
    log = tmp_path / "runs.log"
    monkeypatch.setenv("SAMPLE_PLUGIN_LOG", str(log))
    args = ["evaluate", "--task", TASK, "--suite", TASK / "tests", "--json"]
    code, out, err = cli(helix_main, args + ["--executor", "sample"], capsys)
    assert code == 0, err
    by_plugin = json.loads(out)["outcomes"]
    assert len(log.read_text().splitlines()) == len(by_plugin)  # every program ran on the plug-in
    code, out, err = cli(helix_main, args + ["--executor", "forkserver"], capsys)
    assert code == 0, err
    assert json.loads(out)["outcomes"] == by_plugin
    assert {o["outcome"] for o in by_plugin.values()} == {"pass", "fail"}  # the suite tells programs apart


def _suite_probing_its_sandbox(folder: Path) -> Path:
    from testhelix.llm.registry import credential_env_vars

    folder.mkdir()
    (folder / "test_probe.py").write_text(
        "import os, resource\n"
        f"CREDENTIALS = {list(credential_env_vars())!r}\n\n"
        "def test_no_credential_reaches_executed_code():\n"
        "    assert [n for n in CREDENTIALS if n in os.environ] == []\n\n"
        "def test_confined_by_the_sample_sandbox():\n"
        "    assert resource.getrlimit(resource.RLIMIT_NOFILE)[0] == 200\n")
    return folder


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["sample", "sample_plugin.sandbox:MarkedPlainSandbox"])
def test_a_sandbox_plugin_confines_the_test_process_and_no_credential_reaches_it(sample_plugin, tmp_path, capsys,
                                                                                   monkeypatch, sandbox):
    for name in ("SAMPLE_PLUGIN_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.setenv(name, "secret-" + name)
    suite = _suite_probing_its_sandbox(tmp_path / "suite")
    code, out, err = cli(helix_main, ["evaluate", "--task", TASK, "--suite", suite, "--json", "--sandbox", sandbox,
                                          "--workers", "1"], capsys)
    assert code == 0, err
    assert {o["outcome"] for o in json.loads(out)["outcomes"].values()} == {"pass"}


@pytest.mark.slow
def test_the_sandbox_probe_fails_outside_the_sample_sandbox(sample_plugin, tmp_path, capsys):
    suite = _suite_probing_its_sandbox(tmp_path / "suite")
    code, out, err = cli(helix_main, ["evaluate", "--task", TASK, "--suite", suite, "--json", "--sandbox", "plain",
                                          "--workers", "1"], capsys)
    assert code == 0, err
    assert {o["outcome"] for o in json.loads(out)["outcomes"].values()} == {"fail"}


@pytest.mark.slow
def test_a_provider_plugin_serves_a_run_and_reads_its_own_credential(sample_plugin, tmp_path, capsys, monkeypatch):
    args = ["run", "--pack", "katas", "--split", "all", "--config", "A", "--model", "sample:strong",
            "--limit", "1", "--workers", "1", "--no-coverage", "--json", "--run", tmp_path / "run"]
    code, _, err = cli(helix_main, args, capsys)
    assert code == 2 and "SAMPLE_PLUGIN_API_KEY is not set" in err
    monkeypatch.setenv("SAMPLE_PLUGIN_API_KEY", "secret-sample")
    code, out, err = cli(helix_main, args[:-1] + [tmp_path / "run2"], capsys)
    assert code == 0, err
    summary = json.loads(out)
    assert summary["runs"] == ["sample:strong/A"]
    assert summary["simulated"] is True  # the provider declares its models test doubles
    store = RunStore(tmp_path / "run2", read_only=True)
    try:
        calls = store.query("SELECT model, count(*), bool_and(simulated) FROM model_calls GROUP BY 1")[1]
    finally:
        store.close()
    assert len(calls) == 1 and calls[0][0] == "sample:strong" and calls[0][1] > 0 and calls[0][2] is True
    code, out, err = cli(helix_main, ["report", tmp_path / "run2"], capsys)
    assert code == 0, err
    assert "`sample:strong/A` used simulated models" in out


@pytest.mark.usefixtures("sample_plugin")  # the name is the package's below, not the fixture's folder
def test_a_provider_plugin_sets_the_default_jobs_through_its_optional_hook(monkeypatch):
    import sample_plugin.provider

    from testhelix.llm.registry import model_ref
    from testhelix.parallel import default_jobs

    # without the hook, a provider is taken for a hosted API (8 tasks at once)
    assert default_jobs([model_ref("sample:strong")]) == 8
    assert default_jobs([model_ref("sample_plugin.provider:PROVIDER/strong")]) == 8
    monkeypatch.setattr(sample_plugin.provider.PROVIDER, "concurrent_tasks", lambda info, cores: 3, raising=False)
    assert default_jobs([model_ref("sample:strong")]) == 3   # asked once, when the name is resolved
    assert default_jobs([model_ref("sample:strong"), model_ref("anthropic:claude-opus-4-6")]) == 3  # the slowest pace wins


@pytest.mark.slow
@pytest.mark.parametrize("domain,sandbox", [("counter", "sample"),
                                            ("sample_plugin.counter:DOMAIN", "sample_plugin.sandbox:MarkedPlainSandbox")])
def test_gtdd_runs_a_plugin_domain_in_a_plugin_sandbox(sample_plugin, tmp_path, capsys, domain, sandbox):
    code, out, err = cli(gtdd_main, ["run", "--policy", "public-only", "--domain", domain, "--sandbox", sandbox,
                                     "--rounds", "1", "--quiet", "--json", "--run", tmp_path / "g"], capsys)
    assert code == 0, err
    assert len(json.loads(out)) == 1
    store = RunStore(tmp_path / "g", read_only=True)
    try:
        execution = json.loads(store.query("SELECT config FROM gtdd_config WHERE key = 'execution'")[1][0][0])
    finally:
        store.close()
    assert execution["sandbox"] == "sample-plain" and execution["domain"] == "counters"


def test_prepare_caches_a_tree_before_any_run_in_both_backends(sample_plugin, tmp_path):
    from sample_plugin.executor import SubprocessExecutor

    from testhelix.core.digest import tree_sha256
    from testhelix.execution.executor import ForkServerExecutor
    from testhelix.execution.seam import create_executor

    program = TASK / "solution" / "program"
    for spec in ("forkserver", "sample"):
        with create_executor(spec, workers=1, sandbox="plain") as executor:
            executor.prepare([program])
            backend = executor.inner  # the backend behind the seam's outcome cache
            if spec == "forkserver":
                assert isinstance(backend, ForkServerExecutor)
                cached = backend.trees.path(tree_sha256(program))
            else:
                assert isinstance(backend, SubprocessExecutor)
                cached = backend.trees[tree_sha256(program)]
            assert sorted(p.name for p in cached.iterdir()) == sorted(p.name for p in program.iterdir())
