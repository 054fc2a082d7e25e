"""The isolated runner: one subprocess for many traces, failures contained and classified."""

from __future__ import annotations

import os
import socket
import textwrap

import pytest

from gtdd.domains.base import Trace
from gtdd.domains.kvstore import DOMAIN
from gtdd.domains.kvstore.runner import run_traces
from testhelix.prism.sandbox import detect_sandbox

OPS = [{"cmd": "SET", "args": ["k", "v"]}, {"cmd": "GET", "args": ["k"]}]


def traces(n: int = 3) -> list[Trace]:
    return [Trace.of(OPS + [{"cmd": "GET", "args": [f"x{i}"]}], "strings") for i in range(n)]


def candidate(body: str, top: str = "") -> str:
    return textwrap.dedent(top) + "\nclass Store:\n" + textwrap.indent(textwrap.dedent(body), "    ")


def test_reference_source_passes_the_population_sample_in_one_process():
    sample = DOMAIN.population()[::10]
    got = DOMAIN.run_traces(DOMAIN.reference_source(), sample)
    expected = DOMAIN.reference_results(sample)
    assert [DOMAIN.first_divergence(e, g) for e, g in zip(expected, got)] == [None] * len(sample)


def test_environment_is_scrubbed(monkeypatch):
    monkeypatch.setenv("GTDD_TEST_SECRET", "s3cr3t-value")
    source = candidate("""
        def execute(self, cmd, args):
            import os
            return [os.environ.get("GTDD_TEST_SECRET"), sorted(os.environ)]
    """)
    result = run_traces(source, traces(1))[0]
    assert result.error is None
    secret, names = result.replies[0]
    assert secret is None
    assert "GTDD_TEST_SECRET" not in names and "PATH" in names


def test_infinite_loop_times_out_and_later_traces_still_run():
    source = candidate("""
        def execute(self, cmd, args):
            if args and args[0] == "x1":
                while True:
                    pass
            return "ok"
    """)
    results = run_traces(source, traces(3), per_trace_timeout_s=0.3)
    assert [r.error for r in results] == [None, "timeout", None]
    assert results[2].replies == ("ok", "ok", "ok")


def test_a_loop_that_swallows_the_timer_is_killed_by_the_watchdog():
    source = candidate("""
        def execute(self, cmd, args):
            if args and args[0] == "x0":
                import time
                while True:
                    try:
                        time.sleep(5)
                    except BaseException:
                        pass
            return "ok"
    """)
    results = run_traces(source, traces(2), per_trace_timeout_s=0.2)
    assert [r.error for r in results] == ["timeout", None]


def test_import_failures_are_classified():
    for source in ("raise RuntimeError('boom')\n", "def broken(:\n", "X = 1\n", "while True:\n    pass\n",
                   "import os\nos._exit(3)\n"):
        results = run_traces(source, traces(2), per_trace_timeout_s=0.1)
        assert [r.error for r in results] == ["import", "import"], source


@pytest.mark.slow
def test_an_import_that_swallows_the_timer_is_stopped_once():
    source = "import time\nwhile True:\n    try:\n        time.sleep(5)\n    except BaseException:\n        pass\n"
    results = run_traces(source, traces(3), per_trace_timeout_s=0.1)
    assert [r.error for r in results] == ["import"] * 3


def test_crashes_and_exceptions_are_contained():
    source = candidate("""
        def execute(self, cmd, args):
            if args and args[0] == "x0":
                raise KeyError(cmd)
            if args and args[0] == "x1":
                import os
                os._exit(1)
            if args and args[0] == "x2":
                return {1, 2}
            print("noise on stdout", flush=True)
            return "ok"
    """)
    results = run_traces(source, traces(4))
    assert [r.error for r in results] == ["KeyError", "crash", "malformed", None]
    assert results[0].replies == ("ok", "ok")
    assert results[3].replies == ("ok", "ok", "ok")


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
        result = run_traces(source, traces(1))[0]
        assert result.error is None
        assert "connected" not in result.replies
    finally:
        server.close()


@pytest.mark.skipif(detect_sandbox().kind != "namespaced", reason="file-system hiding needs the namespaced sandbox")
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
    result = run_traces(source, traces(1))[0]
    assert result.error is None
    assert result.replies[0] == ["FileNotFoundError", "ModuleNotFoundError"]
