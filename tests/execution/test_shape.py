"""The host's shape check of a suite (testhelix/execution/shape.py) and the tree walk behind digests:
no recursion, no file read, a clear reason for each limit."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from testhelix.core.digest import tree_files, tree_sha256
from testhelix.execution.shape import SuiteShape, suite_problem
from testhelix.execution.workspace import force_rmtree


def _nest(root: Path, depth: int) -> Path:
    d = root
    root.mkdir()
    for _ in range(depth):  # one level at a time (pathlib's parents=True recurses)
        d = d / "d"
        d.mkdir()
    (d / "test_deep.py").write_text("def test_x():\n    pass\n")
    return root


def test_a_plain_suite_passes(tmp_path):
    (tmp_path / "test_a.py").write_text("def test_a():\n    pass\n")
    assert suite_problem(tmp_path) is None


def test_deep_nests_are_refused_without_recursion(tmp_path):
    root = _nest(tmp_path / "s", 1100)
    try:
        assert "nested deeper than 32" in (suite_problem(root) or '')
        assert len(tree_files(root)) == 1  # the digest's walk is iterative too: no RecursionError
    finally:
        force_rmtree(root)  # pytest's own clean-up of old temporary folders recurses


def test_sparse_files_count_by_apparent_size(tmp_path):
    with open(tmp_path / "sparse.bin", "wb") as f:
        f.truncate(1 << 30)  # 1 GiB apparent, nothing on disk
    assert "over the 16 MB limit per file" in (suite_problem(tmp_path) or '')


def test_totals_and_counts(tmp_path):
    for i in range(5):
        (tmp_path / f"f{i}.bin").write_bytes(b"x" * (1 << 20))
    assert "in total" in (suite_problem(tmp_path, SuiteShape(max_total_mb=4)) or '')
    assert "more than 3 files" in (suite_problem(tmp_path, SuiteShape(max_entries=3)) or '')


def test_non_utf8_names_are_named_in_the_reason(tmp_path):
    os.close(os.open(os.path.join(os.fsencode(tmp_path), b"bad\xffname.py"), os.O_CREAT | os.O_WRONLY))
    problem = suite_problem(tmp_path)
    assert problem is not None and "not valid UTF-8" in problem and "bad\\udcffname.py" in problem


def test_fifos_are_refused(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    assert "not a regular file" in (suite_problem(tmp_path) or '')


def test_streamed_digest_matches_the_whole_file_digest(tmp_path):
    (tmp_path / "a.txt").write_bytes(os.urandom(3 << 20))
    import hashlib
    expected = hashlib.sha256(b"a.txt\0" + hashlib.sha256((tmp_path / "a.txt").read_bytes()).hexdigest().encode()
                              + b"\n").hexdigest()
    assert tree_sha256(tmp_path) == expected


@pytest.mark.skipif(os.uname().machine not in ("x86_64", "aarch64"), reason="filter for x86_64 and aarch64 only")
def test_seccomp_program_jumps_stay_inside():
    from testhelix.execution.syscalls import _SECCOMP_ARCH, _filter_program
    for arch in _SECCOMP_ARCH.values():
        prog = _filter_program(arch)
        for i, (code, jt, jf, _k) in enumerate(prog):
            if code in (0x15, 0x35, 0x45):
                assert 0 <= jt and 0 <= jf and i + 1 + max(jt, jf) < len(prog)
        assert prog[-1][0] == prog[-2][0] == 0x06  # ends in the two returns
