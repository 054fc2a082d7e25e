"""Trace isolation (gtdd/isolation/): one fresh process per trace, CPU-time limits, failures contained."""

from __future__ import annotations

import os
import socket
import textwrap

import pytest

from gtdd.domains.base import ERROR_WALL_CLOCK, Trace, TraceResult
from gtdd.domains.kvstore import DOMAIN
from gtdd.execution import TraceExecutor
from gtdd.isolation import IsolationLimits, execution_config, run_traces
from testhelix.execution.seam import select_sandbox

OPS = [{"cmd": "SET", "args": ["k", "v"]}, {"cmd": "GET", "args": ["k"]}]
FAST = IsolationLimits.for_timeout(0.3)


def traces(n: int = 3) -> list[Trace]:
    return [Trace.of(OPS + [{"cmd": "GET", "args": [f"x{i}"]}], "strings") for i in range(n)]


def candidate(body: str, top: str = "") -> str:
    return textwrap.dedent(top) + "\nclass Store:\n" + textwrap.indent(textwrap.dedent(body), "    ")


def run(source, batch, limits=None):
    return run_traces(source, batch, limits, module_file="kvstore.py")


CLASS_STATE = candidate("""
    data = {}  # class-level: shared by every instance in one process

    def execute(self, cmd, args):
        if cmd == "SET":
            self.data[args[0]] = args[1]
            return len(self.data)
        return [len(self.data), COUNTER.append(1) or len(COUNTER)]
""", top="COUNTER = []\n")


def test_class_level_state_gives_the_same_result_alone_and_in_any_batch():
    ts = [Trace.of([{"cmd": "SET", "args": [str(i), "v"]}, {"cmd": "GET", "args": []}], "f") for i in range(3)]
    alone = {t.id: run(CLASS_STATE, [t])[0] for t in ts}
    assert all(r == TraceResult((1, [1, 1]), None) for r in alone.values())
    for order in (ts, ts[::-1], ts[1:] + ts[:1]):
        assert run(CLASS_STATE, list(order) * 2) == [alone[t.id] for t in list(order) * 2]


def test_nothing_tells_one_trace_of_a_batch_from_another():
    probe = candidate("""
        def execute(self, cmd, args):
            import os, sys
            if cmd == "WRITE":
                open(os.path.join(os.environ["TMPDIR"], "mark"), "w").write(args[0])
                os.system("sleep 30 &") if hasattr(os, "system") else None
                return "ok"
            pids = sorted(p for p in os.listdir("/proc") if p.isdigit()) if os.path.isdir("/proc") else []
            return [sorted(os.listdir(os.environ["TMPDIR"])), len(sys.modules) > 0, os.getuid(),
                    pids if detect else None]
    """, top=f"detect = {select_sandbox().kind == 'namespaced'}\n")
    check = Trace.of([{"cmd": "LOOK", "args": []}], "f")
    marks = [Trace.of([{"cmd": "WRITE", "args": [str(i)]}], "f") for i in range(2)]
    alone = run(probe, [check])[0]
    assert alone.error is None and alone.replies[0][0] == []
    batch = run(probe, [marks[0], check, marks[1], check, check])
    assert [batch[i] for i in (1, 3, 4)] == [alone] * 3
    if select_sandbox().kind == "namespaced":
        assert alone.replies[0][3] == ["1"]  # the worker is PID 1 of its own namespace, nothing left over


def test_environment_is_scrubbed(monkeypatch):
    monkeypatch.setenv("GTDD_TEST_SECRET", "s3cr3t-value")
    source = candidate("""
        def execute(self, cmd, args):
            import os
            return [os.environ.get("GTDD_TEST_SECRET"), sorted(os.environ)]
    """)
    result = run(source, traces(1))[0]
    assert result.error is None
    secret, names = result.replies[0]
    assert secret is None
    assert "GTDD_TEST_SECRET" not in names and "PATH" in names


def test_cpu_limit_stops_a_loop_and_later_traces_still_run():
    source = candidate("""
        def execute(self, cmd, args):
            if args and args[0] == "x1":
                while True:
                    pass
            return "ok"
    """)
    results = run(source, traces(3), FAST)
    assert [r.error for r in results] == [None, "timeout", None]
    assert results[2].replies == ("ok", "ok", "ok")


@pytest.mark.slow
def test_a_loop_that_swallows_the_cpu_timer_is_stopped_by_the_cpu_rlimit():
    source = candidate("""
        def execute(self, cmd, args):
            if args and args[0] == "x0":
                while True:
                    try:
                        while True:
                            pass
                    except BaseException:
                        pass
            return "ok"
    """)
    results = run(source, traces(2), IsolationLimits(cpu_s=0.2, import_cpu_s=0.2))
    assert [r.error for r in results] == ["timeout", None]


@pytest.mark.slow
def test_sleeping_is_not_a_verdict_the_wall_clock_backstop_gives_a_harness_error():
    source = candidate("""
        def execute(self, cmd, args):
            if args and args[0] == "x0":
                import time
                time.sleep(60)
            return "ok"
    """)
    limits = IsolationLimits(cpu_s=0.2, import_cpu_s=0.2, wall_factor=2.0, wall_grace_s=1.0)
    results = run(source, traces(2), limits)
    assert [r.error for r in results] == [ERROR_WALL_CLOCK, None]


def test_harness_errors_are_never_cached():
    class Flaky:
        calls = 0

        def run(self, source, batch, module_file, entry):
            Flaky.calls += 1
            return [TraceResult((), ERROR_WALL_CLOCK if Flaky.calls == 1 else None) for _ in batch]

        def config(self):
            return {}

    executor = TraceExecutor(DOMAIN, runner=Flaky())
    t = traces(1)
    assert executor.candidate("src", t)[0].error == ERROR_WALL_CLOCK
    assert executor.candidate("src", t)[0].error is None and executor.harness_errors == 1
    assert executor.candidate("src", t)[0].error is None and Flaky.calls == 2  # now cached


def test_import_failures_are_classified():
    for source in ("raise RuntimeError('boom')\n", "def broken(:\n", "X = 1\n", "while True:\n    pass\n",
                   "import os\nos._exit(3)\n"):
        results = run(source, traces(2), FAST)
        assert [r.error for r in results] == ["import", "import"], source


def test_crashes_memory_and_exceptions_are_contained():
    source = candidate("""
        def execute(self, cmd, args):
            if args and args[0] == "x0":
                raise KeyError(cmd)
            if args and args[0] == "x1":
                import os
                os._exit(1)
            if args and args[0] == "x2":
                return {1, 2}
            if args and args[0] == "x3":
                return bytearray(4 << 30)
            print("noise on stdout", flush=True)
            return "ok"
    """)
    results = run(source, traces(5))
    assert [r.error for r in results] == ["KeyError", "crash", "malformed", "MemoryError", None]
    assert results[0].replies == ("ok", "ok")
    assert results[4].replies == ("ok", "ok", "ok")


def test_reference_source_passes_a_population_sample():
    sample = DOMAIN.population()[::80]
    got = TraceExecutor(DOMAIN).run(DOMAIN.reference_source(), sample)
    expected = DOMAIN.reference_results(sample)
    assert [DOMAIN.first_divergence(e, g) for e, g in zip(expected, got)] == [None] * len(sample)


def test_execution_config_names_domain_loss_sandbox_limits_and_versions():
    config = TraceExecutor(DOMAIN, 0.5).execution_config()
    assert config["sandbox"] == select_sandbox().kind and config["limits"]["cpu_s"] == 0.5
    assert config["python"] and len(config["isolation_code"]) == 64
    assert (config["domain"], config["module"], config["entry"], config["loss"]) == (
        "kvstore", "kvstore.py", "Store", DOMAIN.loss)
    assert config != TraceExecutor(DOMAIN, 1.0).execution_config()
    assert TraceExecutor(DOMAIN, 0.5, "plain").execution_config()["sandbox"] == "plain"
    assert execution_config(FAST, "plain")["sandbox"] == "plain"


def test_no_network():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    try:
        source = candidate(f"""
            def execute(self, cmd, args):
                import socket
                try:
                    socket.create_connection(("127.0.0.1", {port}), timeout=1).close()
                    return "connected"
                except Exception as exc:
                    return type(exc).__name__
        """)
        result = run(source, traces(1))[0]
        assert result.error is None
        assert "connected" not in result.replies
    finally:
        server.close()


@pytest.mark.skipif(select_sandbox().kind != "namespaced", reason="file-system hiding needs the namespaced sandbox")
def test_project_files_and_packages_are_out_of_reach():
    source = candidate(f"""
        def execute(self, cmd, args):
            out = []
            try:
                open({os.path.join(os.getcwd(), 'gtdd/domains/kvstore/reference.py')!r}).read()
                out.append("read")
            except OSError as exc:
                out.append(type(exc).__name__)
            try:
                import gtdd
                out.append("imported")
            except ImportError as exc:
                out.append(type(exc).__name__)
            return out
    """)
    result = run(source, traces(1))[0]
    assert result.error is None
    assert result.replies[0] == ["FileNotFoundError", "ModuleNotFoundError"]


def test_a_large_record_is_never_cut_when_the_harness_reads_late(monkeypatch):
    """A record larger than the harness's pipe reaches it whole even when the harness is slow to
    read (a loaded machine): the zygote waits for room instead of ending the record early, which
    read as a 'malformed' reply and made verdicts depend on load."""
    import time

    read = os.read

    def slow_read(fd, n):
        time.sleep(0.02)  # the harness drains its pipe slowly: the worker exits while it is full
        return read(fd, min(n, 16384))

    monkeypatch.setattr(os, "read", slow_read)  # in this (the harness's) process only
    big = candidate("""
        def execute(self, cmd, args):
            return "x" * 300_000 if cmd == "GET" else "OK"
    """)
    results = run(big, traces(3))
    assert [r.error for r in results] == [None, None, None]
    assert all(r.replies == ("OK", "x" * 300_000, "x" * 300_000) for r in results)


def test_limit_hits_are_confirmed_under_larger_limits_recorded_in_the_commitment():
    limits = IsolationLimits.for_timeout(0.5)
    larger = limits.confirming()
    assert (larger.cpu_s, larger.import_cpu_s, larger.confirm_factor) == (2.0, 4.0, 1.0)
    assert execution_config(limits)["limits"]["confirm_factor"] == 4.0  # part of every commitment


STREAMS_ONLY_SANDBOX = '''
import sys
from testhelix.execution.sandbox import PlainSandbox

# Starts the launcher with its standard streams and nothing else, as a container runtime would.
CLOSE_AND_EXEC = "import os, sys; os.closerange(3, 1 << 16); os.execv(sys.argv[1], sys.argv[1:])"


class StreamsOnlySandbox(PlainSandbox):
    kind = "streams-only"

    def launch_prefix(self):
        return [sys.executable, "-c", CLOSE_AND_EXEC]
'''


def test_a_sandbox_that_carries_only_the_standard_streams_runs_traces(tmp_path, monkeypatch):
    """What GTDD asks of a sandbox's launch prefix is what the fork server asks: stdin, stdout and
    stderr (no other inherited descriptor), so one plug-in sandbox serves both."""
    (tmp_path / "streams_only_sandbox.py").write_text(STREAMS_ONLY_SANDBOX)
    # Start-up noise on stderr (a warning while the launcher imports) must not be taken for a record.
    (tmp_path / "sitecustomize.py").write_text("import sys\nsys.stderr.write('noise before the log is open\\n')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = "streams_only_sandbox:StreamsOnlySandbox"
    assert select_sandbox(spec).kind == "streams-only"
    batch = traces(2)
    got = run_traces(DOMAIN.reference_source(), batch, FAST, module_file="kvstore.py", sandbox_kind=spec)
    expected = DOMAIN.reference_results(batch)
    assert [DOMAIN.first_divergence(e, g) for e, g in zip(expected, got)] == [None, None]


def test_a_killed_runs_folder_is_removed_by_a_later_run_and_nothing_else(tmp_path):
    import subprocess
    import sys

    from gtdd.isolation.runner import RUN_DIR_PREFIX, remove_dead_run_dirs

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()                                         # a pid that no longer exists
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        folders = {name: tmp_path / name for name in (
            f"{RUN_DIR_PREFIX}{dead.pid}-abc",          # a run killed with SIGKILL
            f"{RUN_DIR_PREFIX}{alive.pid}-def",         # a run still going
            f"{RUN_DIR_PREFIX}{os.getpid()}-ghi",       # this process's own
            f"{RUN_DIR_PREFIX}xyz123",                  # the earlier naming (no pid): not ours to judge
            "other-999999-abc")}                        # not a run folder
        for folder in folders.values():
            (folder / "workspace").mkdir(parents=True)
            (folder / "workspace" / "kvstore.py").write_text("class Store: ...\n")
        removed = remove_dead_run_dirs(tmp_path)
    finally:
        alive.kill()
        alive.wait()
    assert removed == [folders[f"{RUN_DIR_PREFIX}{dead.pid}-abc"]]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(set(folders) - {f"{RUN_DIR_PREFIX}{dead.pid}-abc"})
