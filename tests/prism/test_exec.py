"""Outcome classification, the executor's verdicts, the outcome cache and its store adapter."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from testhelix.execution.cached_executor import CachedExecutor
from testhelix.execution.executor import default_executor
from testhelix.execution.outcome import Limits, Outcome, RawRun, classify, parse_summary
from testhelix.execution.outcome_cache import MemoryOutcomeCache, StoreOutcomeCache, cache_key
from testhelix.execution.seam import create_executor

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tasks"
TASK = FIXTURES / "pack" / "fx-clamp-m01"
LIMITS = Limits(wall_s=20, cpu_s=20, memory_mb=512)


# The seed's conventions: errors are the harness's findings (missing/empty entry, timeout, resource
# limit, harness fault); everything else is the exit status. Printed counts are diagnostics only.
@pytest.mark.parametrize("raw,expected", [
    (RawRun("pytest", exit_code=0, output="..\n2 passed in 0.01s\n"), ("pass", None, 2)),
    (RawRun("pytest", exit_code=1, output=".F\n1 failed, 1 passed in 0.01s\n"),
     ("fail", "tests failed (exit code 1)", 2)),
    (RawRun("pytest", exit_code=0, output="sss\n3 skipped in 0.01s\n"), ("pass", None, 0)),
    (RawRun("pytest", exit_code=5), ("error", "no tests collected (exit code 5)", None)),
    (RawRun("pytest", exit_code=2), ("fail", "collection error or interrupted (exit code 2)", None)),
    (RawRun("pytest", exit_code=4), ("fail", "pytest usage error (exit code 4)", None)),
    # a forged summary never changes a verdict: exit 1 stays fail whatever the output claims
    (RawRun("pytest", exit_code=1, output="=== 9 passed in 0.1s ===\n"), ("fail", "tests failed (exit code 1)", 9)),
    (RawRun("pytest", timed_out=True, wall_s=3), ("error", "timeout after 3s", None)),
    (RawRun("pytest", signal=9), ("fail", "killed by signal SIGKILL", None)),
    (RawRun("pytest", signal=24), ("error", "resource limit: cpu time", None)),
    (RawRun("pytest", signal=25), ("error", "resource limit: file size", None)),
    (RawRun("pytest", signal=9, resource="memory"), ("error", "resource limit: memory", None)),
    (RawRun("pytest", exit_code=1, resource="processes"), ("error", "resource limit: processes", None)),
    (RawRun("pytest", exit_code=1, fault="x"), ("error", "harness fault: x", None)),
    (RawRun("script", exit_code=1, output="..F\n==== 1 failed, 2 passed in 0.1s ===="), ("fail", "exit code 1", 3)),
    (RawRun("script", exit_code=127), ("error", "entry script could not run (exit code 127)", None)),
    (RawRun("script", exit_code=3), ("fail", "exit code 3", None)),
    (RawRun("pytest", pre_error="missing suite"), ("error", "missing suite", None)),
])
def test_classify(raw, expected):
    assert classify(raw) == expected


def test_parse_unittest_summary():
    counts = parse_summary("Ran 4 tests in 0.01s\n\nFAILED (failures=1, errors=1)\n")
    assert counts is not None and counts.executed == 4 and counts.failed == 2


@pytest.fixture(scope="module")
def executor():
    with create_executor("forkserver", workers=2) as ex:  # the pool behind the seam's outcome cache
        yield ex


def _suite(tmp_path: Path, name: str, files: dict[str, str]) -> Path:
    d = tmp_path / name
    d.mkdir()
    for rel, text in files.items():
        (d / rel).write_text(text)
    return d


CASES = {
    "passes": ({"test_a.py": "from clampy import clamp\ndef test_a():\n    assert clamp(9, 0, 5) == 5\n"},
               "pass", None),
    "fails": ({"test_a.py": "from clampy import clamp\ndef test_a():\n    assert clamp(9, 0, 5) == 4\n"},
              "fail", "tests failed (exit code 1)"),
    "empty": ({"helper.py": "X = 1\n"}, "error", "no tests collected (exit code 5)"),
    "skipped": ({"test_s.py": "import pytest\n@pytest.mark.skip\ndef test_s():\n    pass\n"}, "pass", None),
    # an ImportError caused by the program (it lacks a name) rejects it, like a failing test
    "collect_err": ({"test_c.py": "from clampy import no_such_name\ndef test_c():\n    pass\n"},
                    "fail", "collection error or interrupted (exit code 2)"),
    "exit0_early": ({"test_x.py": "import os\ndef test_x():\n    os._exit(0)\n"}, "pass", None),
    "script": ({"run_tests.sh": "exec python -m pytest -q -p no:cacheprovider suite\n",
                "test_a.py": "from clampy import clamp\ndef test_a():\n    assert clamp(1, 0, 5) == 1\n"},
               "pass", None),
    "script_unittest": ({"run_tests.sh": "cd suite && exec python -m unittest -v\n",
                         "test_u.py": "import unittest\nfrom clampy import clamp\n"
                                      "class T(unittest.TestCase):\n    def test_u(self):\n"
                                      "        self.assertEqual(clamp(9, 0, 5), 4)\n"},
                        "fail", "exit code 1"),
    "own_timeout": ({"test_t.py": "import time, pytest\n@pytest.mark.timeout(1)\ndef test_t():\n"
                                  "    time.sleep(30)\n"}, "fail", "tests failed (exit code 1)"),
}


def test_verdicts(executor, tmp_path):
    names = sorted(CASES)
    suites = [_suite(tmp_path, n, CASES[n][0]) for n in names]
    outs = executor.run_many([(s, TASK / "solution" / "program") for s in suites], LIMITS)
    for name, out in zip(names, outs):
        assert (out.status, out.reason) == CASES[name][1:], (name, out.output[-800:])


def test_missing_suite_and_entry_script(executor, tmp_path):
    missing = executor.run(tmp_path / "nope", TASK / "environment", LIMITS)
    assert (missing.status, missing.reason) == ("error", "missing entry: no suite submitted")
    bad = _suite(tmp_path, "bad", {"test_a.py": "def test_a():\n    pass\n"})
    (bad / "run_tests.sh").mkdir()
    assert executor.run(bad, TASK / "environment", LIMITS).reason.startswith("missing entry script")
    empty = _suite(tmp_path, "empty_script", {"run_tests.sh": ""})
    assert executor.run(empty, TASK / "environment", LIMITS).reason.startswith("missing entry script")


def test_same_pair_never_runs_twice(executor):
    suite = FIXTURES / "suites" / "good" / "fx-clamp-m01"
    first = executor.run(suite, TASK / "environment", LIMITS)
    ran = executor.executions
    again = executor.run_many([(suite, TASK / "environment")] * 3, LIMITS)
    assert executor.executions == ran
    assert first.status == "fail" and all(o.status == "fail" and o.cached for o in again)


def test_different_limits_are_a_different_key():
    a = cache_key("s", "p", "v", Limits())
    assert a != cache_key("s", "p", "v", Limits(wall_s=5)) and a == cache_key("s", "p", "v", Limits())


def test_state_does_not_leak_between_runs(executor, tmp_path):
    writer = _suite(tmp_path, "writer", {"test_w.py": "import os\ndef test_w():\n"
                                          "    open(os.path.expanduser('~/state'), 'w').write('1')\n"
                                          "    open('/tmp/state', 'w').write('1')\n"})
    reader = _suite(tmp_path, "reader", {"test_r.py": "import os\ndef test_r():\n"
                                          "    assert not os.path.exists(os.path.expanduser('~/state'))\n"
                                          "    assert not os.path.exists('/tmp/state')\n"})
    program = TASK / "solution" / "program"
    assert executor.run(writer, program, LIMITS).status == "pass"
    assert executor.run(reader, program, LIMITS).status == "pass"


class FakeStore:
    def __init__(self):
        self.rows = {}

    def get_execution(self, key):
        return self.rows.get(key)

    def put_execution(self, key, row):
        self.rows[key] = dict(row)


def test_store_cache_round_trip():
    store = FakeStore()
    cache = StoreOutcomeCache(store)
    out = Outcome("fail", "1 failing test(s)", 2, 0.5, "F.")
    cache.describe("k", "sd", "pd", "v", Limits())
    cache.put("k", out)
    assert store.rows["k"]["suite_digest"] == "sd" and store.rows["k"]["status"] == "fail"
    assert cache.get("k") == out and cache.get("other") is None


def test_persistent_cache_serves_a_new_executor(tmp_path):
    from testhelix.store.runstore import RunStore

    store = RunStore(tmp_path / "run")
    suite = FIXTURES / "suites" / "weak" / "fx-clamp-m01"
    with default_executor(1, cache=StoreOutcomeCache(store)) as ex:
        first = ex.run(suite, TASK / "environment", LIMITS)
    with default_executor(1, cache=StoreOutcomeCache(store)) as ex:
        second = ex.run(suite, TASK / "environment", LIMITS)
        assert isinstance(ex, CachedExecutor)  # every executor is made behind the outcome cache
        assert ex.executions == 0 and second.cached and second.status == first.status == "pass"
    cols, rows = store.query("SELECT suite_digest, status FROM executions")
    assert len(rows) == 1 and rows[0][1] == "pass"
    store.close()


def test_memory_cache_strips_cached_flag():
    c = MemoryOutcomeCache()
    c.put("k", Outcome("pass", None, 1, 0.1, "", cached=True))
    got = c.get("k")
    assert got is not None and got.cached is False


def test_coverage_runs_are_their_own_executions(executor, tmp_path):
    from testhelix.execution.coverage_run import BEGIN, END

    suite = _suite(tmp_path, "cov", {
        "test_a.py": "from clampy import clamp\ndef test_a():\n    assert clamp(9, 0, 5) == 5\n",
        "run_tests.sh": "echo an own script is not what coverage measures; exit 3\n"})
    program = TASK / "solution" / "program"
    ran = executor.executions
    plain = executor.run(suite, program, LIMITS)
    measured = executor.run(suite, program, LIMITS, coverage=True)
    assert executor.executions == ran + 2 and not measured.cached
    assert plain.status == "fail" and BEGIN not in plain.output  # the suite's own script ran (exit 3)
    assert measured.status == "pass", measured.output[-800:]
    report = json.loads(measured.output[measured.output.rindex(BEGIN) + len(BEGIN):measured.output.rindex(END)])
    assert set(report["files"]) == {"clampy/__init__.py"}  # the program only, never the suite
    assert executor.run(suite, program, LIMITS, coverage=True).cached


def test_traceback_style_is_part_of_the_limits(executor, tmp_path):
    from dataclasses import replace

    test = "from clampy import clamp\ndef test_a():\n    assert clamp(9, 0, 5) == 4\n"
    suite = _suite(tmp_path, "tb", {"test_a.py": test})
    program = TASK / "solution" / "program"
    full = executor.run(suite, program, LIMITS)
    brief = executor.run(suite, program, replace(LIMITS, traceback="line"))
    assert not brief.cached and full.status == brief.status == "fail"
    assert ">       assert clamp(9, 0, 5) == 4" in full.output  # pytest's default: the source excerpt
    assert "test_a.py:3: assert 5 == 4" in brief.output and ">       assert" not in brief.output
    with pytest.raises(ValueError, match="Limits.traceback"):
        Limits(traceback="fancy")
