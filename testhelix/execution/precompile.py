"""Byte-code for cached trees, compiled once by the fork server instead of once per execution.

Why: the sandboxed test process runs with bytecode writing off (nothing it does may outlive it),
so before this every execution compiled the program's modules and had pytest parse and rewrite the
asserts of every test module again: about 16 ms of a 90 ms execution on the bundled pack, for a
suite that typically runs on ten or more programs.

What is written, next to each source file in the cached (read-only) tree:
- `__pycache__/<name>.<cache_tag>.pyc` for every module, as `py_compile` makes it;
- `__pycache__/<name>.<cache_tag>-pytest-<version>.pyc` for the files pytest rewrites by default
  (test_*.py, *_test.py, conftest.py): their assert-rewritten code, in the file pytest itself
  looks for before rewriting.

Safety: this only compiles (no code of the tree runs); both kinds are PEP 552 checked-hash pycs,
so Python and pytest compare the stored hash with the source they are about to import and ignore
a pyc that does not match; the sandbox uid cannot change the cached inodes. Anything that goes
wrong here (a syntax error, a pytest whose private pyc layout moved) only means the child compiles
as before.
"""

from __future__ import annotations

import ast
import fnmatch
import importlib.util
import marshal
import os
import py_compile
from pathlib import Path

from _pytest.assertion import rewrite as _rewrite  # pytest's own rewriter, so the code is identical

REWRITTEN_PATTERNS = ("test_*.py", "*_test.py", "conftest.py")  # pytest's default python_files + conftest
REWRITTEN_SUFFIX = _rewrite.PYC_TAIL  # e.g. ".cpython-311-pytest-9.2.0.pyc"
INI_NAMES = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
# A run imports a fraction of a large repository, and every panel candidate is a tree of its own:
# compiling thousands of modules per candidate up front would cost more than it saves, so larger
# trees are left to compile what they import, as before.
MAX_MODULES = 400
CHECKED_HASH_FLAGS = (3).to_bytes(4, "little")  # PEP 552: hash-based, always checked


MAX_SOURCE_BYTES = 1 << 20  # larger modules are left to the test process (which may never import them)
HELPER_MEMORY_MB, HELPER_CPU_S = 1024, 120  # the compile helper's rlimits


def precompile_tree(root: Path, max_modules: int = MAX_MODULES, shown_as: str | None = None) -> int:
    """Write both kinds of pyc for every .py file under `root` (nothing for a tree of more than
    `max_modules` modules). `shown_as`: the folder the tree will be seen at inside the sandbox; the
    code objects name their files there, never the host folder being compiled. Returns how many
    files were written."""
    sources = [os.path.join(d, name) for d, _dirs, files in os.walk(root) for name in files if name.endswith(".py")]
    if len(sources) > max_modules:
        return 0
    written = 0
    for src in sources:
        try:
            if os.lstat(src).st_size > MAX_SOURCE_BYTES:
                continue
        except OSError:
            continue
        shown = os.path.join(shown_as, os.path.relpath(src, root)) if shown_as else src
        written += _plain_pyc(src, shown)
        if any(fnmatch.fnmatch(os.path.basename(src), pat) for pat in REWRITTEN_PATTERNS):
            written += _rewritten_pyc(Path(src), shown)
    return written


def _plain_pyc(src: str, shown: str) -> int:
    try:
        py_compile.compile(src, cfile=importlib.util.cache_from_source(src), dfile=shown, doraise=True,
                           invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)
        return 1
    except (py_compile.PyCompileError, OSError, ValueError):
        return 0


def _rewritten_pyc(src: Path, shown: str) -> int:
    try:
        source = src.read_bytes()
        tree = ast.parse(source, filename=shown)
        # config=None: the rewrite without the assertion-pass hook, which is what a run gets unless
        # an ini file enables it (see asks_for_pass_hook; such runs do not get these files).
        _rewrite.rewrite_asserts(tree, source, shown, None)
        code = compile(tree, shown, "exec", dont_inherit=True)
        cache = src.parent / "__pycache__"
        cache.mkdir(exist_ok=True)
        data = importlib.util.MAGIC_NUMBER + CHECKED_HASH_FLAGS + importlib.util.source_hash(source)[:8]
        (cache / (src.name[:-3] + REWRITTEN_SUFFIX)).write_bytes(data + marshal.dumps(code))
        return 1
    except (SyntaxError, ValueError, OSError, RecursionError):
        return 0


def asks_for_pass_hook(*roots: Path) -> bool:
    """True when an ini file at the top of one of the trees may enable pytest's assertion-pass hook.

    Such a run must rewrite asserts itself (the hook changes the rewritten code); a plain text check
    is enough because it only errs towards compiling in the child.
    """
    for root in roots:
        for name in INI_NAMES:
            try:
                if "enable_assertion_pass_hook" in (root / name).read_text(errors="replace"):
                    return True
            except OSError:
                continue
    return False


def is_rewritten_pyc(name: str) -> bool:
    return name.endswith(REWRITTEN_SUFFIX)


def _helper_limits() -> None:
    import resource

    mb = 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (HELPER_MEMORY_MB * mb, HELPER_MEMORY_MB * mb))
    resource.setrlimit(resource.RLIMIT_CPU, (HELPER_CPU_S, HELPER_CPU_S + 1))


def compile_in_helper(trees: list[tuple[Path, str]], timeout_s: float = 300.0, helpers: int = 1) -> None:
    """Compile (tree, folder it is seen at in the sandbox) pairs in short-lived helper processes
    (`python -m testhelix.execution.precompile DIR SHOWN_AS ...`), each under a memory and CPU rlimit:
    no long-lived process of the harness ever parses a tree. Up to `helpers` of them run at once,
    each on its share of the trees (a batch's compile time is otherwise spent on one core while the
    others wait for it). A helper that fails only means the test processes compile what they
    import, as without this step."""
    import subprocess
    import sys
    import time

    package_parent = str(Path(__file__).resolve().parents[2])
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": package_parent, "LANG": "C.UTF-8"}
    shares = _shares(trees, max(1, helpers))
    procs = []
    for share in shares:
        try:
            args = [str(x) for pair in share for x in pair]
            procs.append(subprocess.Popen([sys.executable, "-s", "-m", "testhelix.execution.precompile", *args],
                                          env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL, preexec_fn=_helper_limits))
        except OSError:
            continue
    deadline = time.monotonic() + timeout_s
    for proc in procs:
        try:
            proc.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _shares(trees: list[tuple[Path, str]], n: int) -> list[list[tuple[Path, str]]]:
    """Split trees into at most `n` shares of about equal source size (largest first, each to the
    lightest share); a helper is only worth its start-up for a few trees."""
    n = min(n, max(1, len(trees) // 4))
    sizes = {tree: _source_bytes(tree[0]) for tree in trees}
    shares: list[list[tuple[Path, str]]] = [[] for _ in range(n)]
    loads = [0] * n
    for tree in sorted(trees, key=lambda t: -sizes[t]):
        i = loads.index(min(loads))
        shares[i].append(tree)
        loads[i] += sizes[tree] + 1
    return [s for s in shares if s]


def _source_bytes(tree: Path) -> int:
    total = 0
    for d, _dirs, files in os.walk(tree):
        for name in files:
            if name.endswith(".py"):
                try:
                    total += os.lstat(os.path.join(d, name)).st_size
                except OSError:
                    pass
    return total


if __name__ == "__main__":
    import sys

    pairs = sys.argv[1:]
    for tree, shown_as in zip(pairs[::2], pairs[1::2]):
        precompile_tree(Path(tree), shown_as=shown_as)
