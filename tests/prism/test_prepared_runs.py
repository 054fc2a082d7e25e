"""What the fork server prepares once per tree or per server must not change what a run observes."""

from __future__ import annotations

import importlib.util
import marshal
import subprocess
import sys
from pathlib import Path

import _pytest.config as pytest_config
import pytest
from _pytest.assertion.rewrite import rewrite_asserts

from testhelix.execution.executor import ForkServerExecutor
from testhelix.execution.outcome import PYTEST_ARGS, Limits, pytest_args
from testhelix.execution.precompile import REWRITTEN_SUFFIX, asks_for_pass_hook, compile_in_helper, precompile_tree
from testhelix.execution.pytest_warm import PROG, ConfigTemplate
from testhelix.execution.sandbox import OVERLAY_ENV, namespaces_available
from testhelix.execution.workspace import TreeCache

PROGRAM = Path(__file__).resolve().parents[1] / "fixtures" / "tasks" / "pack" / "fx-clamp-m01" / "solution" / "program"
LIMITS = Limits(wall_s=20, cpu_s=20, memory_mb=512)
TEST_SOURCE = "from clampy import clamp\n\ndef test_a():\n    x = clamp(9, 0, 5)\n    assert x == 4, 'why'\n"


def _tree(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True)
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_cached_suite_carries_pytests_own_rewrite(tmp_path):
    src = _tree(tmp_path / "suite", {"test_a.py": TEST_SOURCE, "conftest.py": "X = 1\n", "helper.py": "Y = 2\n"})
    cache = TreeCache(tmp_path / "staging", compile_trees=compile_in_helper)  # a helper process compiles
    cache.ensure({"digest-1": src}, suites=frozenset({"digest-1"}))
    cached = cache.path("digest-1")
    pyc = cached / "__pycache__" / ("test_a" + REWRITTEN_SUFFIX)
    data = pyc.read_bytes()
    assert data[:4] == importlib.util.MAGIC_NUMBER and data[4:8] == b"\x03\x00\x00\x00"
    assert data[8:16] == importlib.util.source_hash(TEST_SOURCE.encode())[:8]
    tree = __import__("ast").parse(TEST_SOURCE)
    rewrite_asserts(tree, TEST_SOURCE.encode(), str(cached / "test_a.py"), None)
    code = marshal.loads(data[16:])
    assert code == compile(tree, str(cached / "test_a.py"), "exec", dont_inherit=True)
    assert code.co_filename == "/workspace/suite/test_a.py"  # where a job sees it, never the host folder
    assert str(tmp_path).encode() not in data
    assert (cached / "__pycache__" / ("conftest" + REWRITTEN_SUFFIX)).is_file()
    assert not (cached / "__pycache__" / ("helper" + REWRITTEN_SUFFIX)).exists()  # not a test module
    assert Path(importlib.util.cache_from_source(str(cached / "helper.py"))).is_file()
    assert all(not (p.stat().st_mode & 0o222) for p in cached.rglob("*"))  # read-only, pycs included


def test_a_pyc_that_no_longer_matches_its_source_is_ignored(tmp_path):
    pkg = _tree(tmp_path / "prog", {"mod.py": "VALUE = 1\n"})
    precompile_tree(pkg)
    (pkg / "mod.py").write_text("VALUE = 22\n")
    out = subprocess.run([sys.executable, "-B", "-c", "import mod; print(mod.VALUE)"], cwd=pkg,
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "22"


def test_unparsable_sources_are_left_to_the_run(tmp_path):
    tree = _tree(tmp_path / "t", {"test_bad.py": "def test(:\n", "ok.py": "A = 1\n"})
    assert precompile_tree(tree) == 1  # only ok.py


def test_large_trees_are_left_to_compile_what_they_import(tmp_path):
    tree = _tree(tmp_path / "big", {f"pkg/m{i}.py": f"X = {i}\n" for i in range(5)})
    assert precompile_tree(tree, max_modules=4) == 0 and not list(tree.rglob("*.pyc"))
    assert precompile_tree(tree, max_modules=5) == 5


def test_pass_hook_ini_is_detected(tmp_path):
    plain = _tree(tmp_path / "a", {"pytest.ini": "[pytest]\naddopts = -q\n"})
    hooked = _tree(tmp_path / "b", {"tox.ini": "[pytest]\nenable_assertion_pass_hook = true\n"})
    assert not asks_for_pass_hook(plain) and asks_for_pass_hook(plain, hooked)


def _overlay_available(tmp: Path) -> bool:
    """Probe overlayfs the way a fork server does, in a throwaway private mount namespace."""
    probe = (f"from pathlib import Path; from testhelix.execution.overlay import overlay_supported; "
             f"raise SystemExit(0 if overlay_supported(Path({str(tmp)!r})) else 1)")
    cmd = ["unshare", "--mount", "--propagation", "private", sys.executable, "-c", probe]
    return subprocess.run(cmd, capture_output=True).returncode == 0


@pytest.fixture(scope="module", params=["overlay", "linked"])
def executor(request, tmp_path_factory):
    """Both ways the namespaced sandbox makes a workspace (the plain fallback always copies)."""
    if not namespaces_available():
        pytest.skip("needs root and unshare (namespaced sandbox)")
    if request.param == "overlay" and not _overlay_available(tmp_path_factory.mktemp("probe")):
        pytest.skip("this kernel cannot mount overlayfs here (workspaces are hard-linked instead)")
    mp = pytest.MonkeyPatch()
    mp.setenv(OVERLAY_ENV, "1" if request.param == "overlay" else "0")
    with ForkServerExecutor(workers=1, sandbox="namespaced") as ex:
        ex.workspace_kind = request.param  # type: ignore[attr-defined]  # a label the tests read back
        yield ex
    mp.undo()


def test_the_workspace_is_made_the_way_asked(executor, tmp_path):
    overlay = executor.workspace_kind == "overlay"
    suite = _tree(tmp_path / "kind", {"test_k.py": (
        "def test_kind():\n"
        "    kinds = [ln.split()[2] for ln in open('/proc/self/mounts') if ln.split()[1] == '/workspace']\n"
        f"    assert len(kinds) == 1 and (kinds[0] == 'overlay') is {overlay}, kinds\n")})
    out = executor.run(suite, PROGRAM, LIMITS)
    assert out.status == "pass", out.output[-1500:]


def test_the_test_may_write_anywhere_in_its_workspace_but_not_into_the_cache(executor, tmp_path):
    vandal = _tree(tmp_path / "vandal", {"test_v.py": (
        "import os, pytest\n"
        "def test_vandal():\n"
        "    with pytest.raises(PermissionError):\n"
        "        open('clampy/__init__.py', 'a').write('BROKEN = 1\\n')\n"
        "    os.unlink('clampy/__init__.py')\n"
        "    open('clampy/__init__.py', 'w').write('def clamp(*a):\\n    return 0\\n')\n"
        "    open('clampy/extra.txt', 'w').write('x')\n"
        "    open('suite/new_file.py', 'w').write('x = 1\\n')\n"
        "    os.makedirs('.home/deep/er')\n")})
    check = _tree(tmp_path / "check", {"test_c.py": (
        "import os\nfrom clampy import clamp\n"
        "def test_clean():\n"
        "    assert clamp(9, 0, 5) == 5\n"
        "    assert not os.path.exists('clampy/extra.txt') and not os.path.exists('.home/deep')\n"
        "    assert sorted(os.listdir('suite')) in (['test_c.py'], ['__pycache__', 'test_c.py'])\n")})
    first, second = executor.run_many([(vandal, PROGRAM), (check, PROGRAM)], LIMITS)
    assert first.status == "pass", first.output[-1500:]
    assert second.status == "pass", second.output[-1500:]


def test_precompiled_suite_still_fails_with_pytests_message(executor, tmp_path):
    suite = _tree(tmp_path / "s", {"test_a.py": TEST_SOURCE})
    outs = executor.run_many([(suite, PROGRAM)] * 2, LIMITS)
    assert outs[0].status == "fail"
    assert "AssertionError: why" in outs[0].output and "assert 5 == 4" in outs[0].output


def test_a_suite_that_enables_the_pass_hook_gets_it(executor, tmp_path):
    suite = _tree(tmp_path / "hook", {
        "pytest.ini": "[pytest]\nenable_assertion_pass_hook = true\n",
        "conftest.py": "SEEN = []\n\ndef pytest_assertion_pass(item, lineno, orig, expl):\n    SEEN.append(orig)\n",
        "test_h.py": "import conftest\n\ndef test_1():\n    assert 1 == 1\n\n"
                     "def test_2():\n    assert conftest.SEEN == ['1 == 1'], conftest.SEEN\n"})
    out = executor.run(suite, PROGRAM, LIMITS)
    assert out.status == "pass", out.output[-1500:]


def test_the_suite_sees_its_own_invocation_and_can_run_pytest_again(executor, tmp_path):
    suite = _tree(tmp_path / "inv", {
        "conftest.py": "pytest_plugins = ['pytester']\n",
        "test_inv.py": "import os\nfrom pathlib import Path\n\n"
                       "def test_invocation(request):\n"
                       "    params = request.config.invocation_params\n"
                       f"    assert params.args == {(*pytest_args(LIMITS), 'suite')!r}\n"
                       "    assert params.dir == Path.cwd()\n\n"
                       "def test_inner_run(pytester):\n"
                       "    pytester.makepyfile('def test_x():\\n    assert 1\\n')\n"
                       "    pytester.runpytest_inprocess('-p', 'no:cacheprovider').assert_outcomes(passed=1)\n"})
    out = executor.run(suite, PROGRAM, LIMITS)
    assert out.status == "pass" and out.tests_run == 2, out.output[-1500:]


def test_template_is_used_once_and_only_for_the_expected_call():
    template = ConfigTemplate.build()
    assert template.active
    original = pytest_config.get_config
    template.install([*PYTEST_ARGS, "suite"])
    other = pytest_config.get_config(["-q", "elsewhere"], None, prog=PROG)
    assert other is not template.config and pytest_config.get_config is original
    template.install([*PYTEST_ARGS, "suite"])
    adopted = pytest_config.get_config([*PYTEST_ARGS, "suite"], None, prog=PROG)
    assert adopted is template.config and adopted.invocation_params.dir == Path.cwd()
    assert pytest_config.get_config is original
