"""MBPP problems as task sources (testhelix/pack/mbpp.py), on made-up records in MBPP's format, and
the bundled data file's licence and size."""

from __future__ import annotations

import json
import subprocess
import sys

from testhelix.pack.mbpp import LICENCE, default_data_file, read_problems, write_sources

ROW = {"task_id": 7, "text": "Write a function to add two numbers.",
       "code": "import math\r\ndef add(a, b):\r\n\treturn a + b", "test_setup_code": "X = 2",
       "test_list": ["assert add(1, X) == 3", "assert add(0, 0) == 0"], "challenge_test_list": ["assert add(-1, 1) == 0"]}


def _data(tmp_path, rows):
    path = tmp_path / "mbpp.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_a_problem_becomes_a_task_source_whose_tests_pass_on_its_reference(tmp_path):
    bad = {**ROW, "task_id": 8, "code": "def other():\n    return 1\n"}          # the assertion calls nothing it defines
    sources, refused = write_sources(_data(tmp_path, [ROW, bad]), tmp_path / "src")
    assert [s.id for s in sources] == ["mbpp-007"] and refused[0][0] == "MBPP/8"
    (src,) = sources
    assert dict(src.upstream) == {"source_id": "MBPP/7", "entry_point": "add", "licence": LICENCE,
                                  "origin": "google-research/google-research mbpp/mbpp.jsonl"}
    assert "def add(a, b)" in src.spec and "add two numbers" in src.spec
    assert "\r" not in (src.reference / "program.py").read_text()
    tests = (src.tests / "test_program.py").read_text()
    assert tests.count("def test_check_") == 3 and "X = 2" in tests
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(src.tests)],
                          cwd=src.reference, capture_output=True, text=True,
                          env={"PYTHONPATH": str(src.reference), "PATH": ""})
    assert done.returncode == 0, done.stdout


def test_the_bundled_data_file_holds_every_problem():
    rows = read_problems(default_data_file())
    assert len(rows) == 974 and {r["task_id"] for r in rows} == set(range(1, 975))
    assert default_data_file().stat().st_size < 2_000_000
