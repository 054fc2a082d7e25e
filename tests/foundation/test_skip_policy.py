"""CI requires zero unexpected skips (tests/skip_policy.py): inner pytest sessions with and without CI."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]

SUITE = """
import pytest

def test_runs():
    assert True

def test_listed():
    pytest.skip("needs a thing this machine lacks")

@pytest.mark.skipif(True, reason="unlisted condition")
def test_unlisted():
    pass

@pytest.mark.xfail(reason="known bug", strict=True)
def test_expected_failure():
    assert False
"""

LISTED = '[[skip]]\ntest = "test_suite.py::test_listed"\nreason = "the machine lacks the thing"\n'
BOTH = LISTED + '\n[[skip]]\ntest = "test_suite.py::test_unl*"\nreason = "a pattern"\n'


@pytest.fixture
def suite(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makeconftest("pytest_plugins = ['skip_policy']\n")
    pytester.makeini("[pytest]\nallowed_skips = skips.toml\n")
    pytester.makepyfile(test_suite=SUITE)
    return pytester


def test_an_unlisted_skip_fails_the_session_in_ci(suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    (suite.path / "skips.toml").write_text(LISTED)
    result = suite.runpytest()
    result.assert_outcomes(passed=1, skipped=2, xfailed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*unexpected skips (CI requires none)*",
                                 "test_suite.py::test_unlisted: unlisted condition",
                                 "1 skip(s) not on the allowlist*"])
    assert "test_listed:" not in result.stdout.str() and "test_expected_failure" not in result.stdout.str()


def test_listed_skips_pass_in_ci(suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    (suite.path / "skips.toml").write_text(BOTH)
    result = suite.runpytest()
    result.assert_outcomes(passed=1, skipped=2, xfailed=1)
    assert result.ret == pytest.ExitCode.OK
    assert "unexpected skips" not in result.stdout.str()


def test_outside_ci_skips_only_count(suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    result = suite.runpytest()  # no allowlist file at all
    result.assert_outcomes(passed=1, skipped=2, xfailed=1)
    assert result.ret == pytest.ExitCode.OK


def test_a_module_skipped_at_collection_counts_too(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "1")
    pytester.makeconftest("pytest_plugins = ['skip_policy']\n")
    pytester.makeini("[pytest]\nallowed_skips = skips.toml\n")
    pytester.makepyfile(test_gone="import pytest\npytest.importorskip('no_such_module_here')\n\n"
                                  "def test_x():\n    pass\n")
    result = pytester.runpytest()
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["test_gone.py: *no_such_module_here*"])


def test_a_malformed_allowlist_is_a_usage_error(suite: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    (suite.path / "skips.toml").write_text('[[skip]]\ntest = "test_suite.py::*"\n')  # no reason
    result = suite.runpytest()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*skips.toml: skip entry 1 needs a non-empty `test` pattern and `reason`*"])


@pytest.mark.parametrize(("value", "expected"), [("true", True), ("1", True), ("", False), ("false", False),
                                                 ("0", False), (None, False)])
def test_in_ci_reads_the_ci_variable(value: str | None, expected: bool) -> None:
    from tests.skip_policy import in_ci

    assert in_ci({} if value is None else {"CI": value}) is expected
