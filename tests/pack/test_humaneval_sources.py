"""HumanEval problems as task sources (testhelix/pack/humaneval.py), on small made-up records in
HumanEval's format (the real data file is a build-time input, not a test dependency)."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys

from testhelix.pack.humaneval import context_of, difficulty_of, verifier_module, write_sources

PROMPT = 'from typing import List\n\n\ndef total(xs: List[int]) -> int:\n    """Sum of xs."""\n'
SOLUTION = "    return sum(xs)\n"
CHECK = '''

METADATA = {}


def check(candidate):
    import random
    assert candidate([1, 2]) == 3
    assert True, "always"
    xs = [random.randint(0, 9) for _ in range(5)]
    assert candidate(xs) == sum(xs)
    for n in range(3):
        assert candidate([n]) == n
'''


def _records(tmp_path, rows):
    path = tmp_path / "HumanEval.jsonl.gz"
    with gzip.open(path, "wt") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in rows)
    return path


def test_the_check_becomes_one_seeded_pytest_test_per_assertion(tmp_path):
    text = verifier_module(CHECK, "total", PROMPT + SOLUTION)
    assert "from program import total" in text and "candidate" not in text
    assert text.count("def test_check_") == 3          # `assert True` is dropped; the loop is one test
    # a local `import random` comes before the seed, which would otherwise hit an unbound name
    assert "    import random\n    random.seed(0)\n    xs = " in text
    (tmp_path / "program.py").write_text(PROMPT + SOLUTION)
    (tmp_path / "test_program.py").write_text(text)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_program.py"],
                          cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout
    (tmp_path / "program.py").write_text(PROMPT + "    return sum(xs) + 1\n")
    failed = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_program.py"],
                            cwd=tmp_path, capture_output=True, text=True)
    assert failed.returncode == 1 and failed.stdout.count("FAILED test_program.py::test_check_") == 3


def test_helpers_of_the_prompt_that_the_check_uses_are_imported():
    prompt = "def enc(s):\n    return s[::-1]\n\n\ndef dec(s):\n    \"\"\"Undo enc.\"\"\"\n"
    check = "def check(candidate):\n    assert candidate(enc('ab')) == 'ab'\n"
    assert "from program import dec, enc" in verifier_module(check, "dec", prompt + "    return s[::-1]\n")


def test_context_and_difficulty_rules():
    assert context_of(PROMPT + SOLUTION, "total") == "general"
    assert context_of("def f(xs):\n    return sorted(xs)\n", "f") == "algorithm"
    assert context_of("def f(n):\n    while n > 1:\n        n //= 2\n    return n\n", "f") == "algorithm"
    assert context_of("def f(xs):\n    return [[a * b for b in xs] for a in xs]\n", "f") == "algorithm"
    assert context_of("def f(n):\n    return 1 if n < 2 else n * f(n - 1)\n", "f") == "algorithm"
    # a helper given by the prompt does not count, only the entry point's own body
    assert context_of("def g(xs):\n    return sorted(xs)\n\n\ndef f(x):\n    return x\n", "f") == "general"
    assert difficulty_of("    return 1\n") == "easy"
    assert difficulty_of("    x = 1\n" * 5) == "medium"
    assert difficulty_of("    # note\n\n" + "    x = 1\n" * 11) == "hard"


def test_write_sources_records_the_source_id_and_refuses_what_cannot_be_converted(tmp_path):
    rows = [{"task_id": "HumanEval/7", "prompt": PROMPT, "canonical_solution": SOLUTION, "test": CHECK,
             "entry_point": "total"},
            {"task_id": "HumanEval/8", "prompt": PROMPT, "canonical_solution": SOLUTION, "test": "x = 1\n",
             "entry_point": "total"}]
    sources, refused = write_sources(_records(tmp_path, rows), tmp_path / "out")
    (src,) = sources
    assert src.id == "humaneval-007" and dict(src.upstream)["source_id"] == "HumanEval/7"
    assert src.source == "humaneval" and src.packages == ("program",) and src.target == "program.py"
    assert (src.reference / "program.py").read_text() == PROMPT + SOLUTION
    assert refused == [("HumanEval/8", "the program or its check cannot be converted: no check(candidate) function")]
    only, _ = write_sources(_records(tmp_path, rows), tmp_path / "out2", only={8})
    assert only == []
