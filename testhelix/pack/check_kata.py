"""Quick checker for one hand-written kata: `python -m testhelix.pack.check_kata KATA_DIR`.

It runs the trusted tests on the reference, every alternative, every mutation and every fix and
wrong fix, and the bank tests on the reference, the alternatives and every mutation, and prints a
verdict. The kata code is our own trusted code, so plain pytest subprocesses with a junit report
are fine here (the sandboxed executor is for untrusted suites).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from testhelix.core.errors import UserError
from testhelix.pack.kata import Kata, load_kata, write_variant

MIN_MUTATIONS, MIN_DEFECTS, MIN_BANK = 12, 8, 16


def run_pytest(program: Path, tests: Path, workdir: Path, timeout: float = 120) -> dict[str, bool]:
    """Per-test pass/fail of `tests` (a file or folder) against `program`; {} if nothing ran."""
    report = workdir / "report.xml"
    env = {**os.environ, "PYTHONPATH": str(program), "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0"}
    try:
        subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={report}", str(tests)],
            cwd=workdir, env=env, capture_output=True, timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"<timeout>": False}
    if not report.exists():
        return {}
    results = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        bad = any(child.tag in ("failure", "error", "skipped") for child in case)
        results[case.get("name", "?")] = not bad
    return results


def _variants(kata: Kata, tmp: Path) -> list[tuple[str, str, Path]]:
    """(name, expectation, program dir): expectation 'pass' or 'fail' under the trusted tests."""
    out = [("reference", "pass", write_variant(kata, tmp / "reference"))]
    for alt in kata.alternative_dirs:
        dest = tmp / alt.name
        shutil.copytree(alt, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        out.append((alt.name, "pass", dest))
    for m in kata.mutations:
        out.append((m.id, "fail", write_variant(kata, tmp / m.id, m)))
        for i, fix in enumerate(m.fixes):
            out.append((f"{m.id}.fix{i}", "pass", write_variant(kata, tmp / f"{m.id}.fix{i}", m, fix)))
        for i, wrong in enumerate(m.wrong_fixes):
            out.append((f"{m.id}.wrong{i}", "fail", write_variant(kata, tmp / f"{m.id}.wrong{i}", m, wrong)))
    return out


def check(kata: Kata, workers: int = 2) -> list[str]:
    problems: list[str] = []
    if len(kata.mutations) < MIN_MUTATIONS:
        problems.append(f"only {len(kata.mutations)} mutations (need {MIN_MUTATIONS})")
    if len(kata.defects) < MIN_DEFECTS:
        problems.append(f"only {len(kata.defects)} defects (need {MIN_DEFECTS})")
    if len(kata.alternative_dirs) < 4:
        problems.append(f"only {len(kata.alternative_dirs)} alternatives (need 4)")
    for m in kata.defects:
        if not m.fixes or len(m.wrong_fixes) < 2:
            problems.append(f"{m.id}: a defect needs >= 1 fix and >= 2 wrong fixes")
    with tempfile.TemporaryDirectory(prefix=f"kata-{kata.id}-") as tmpname:
        tmp = Path(tmpname)
        variants = _variants(kata, tmp)

        def trusted(v: tuple[str, str, Path]) -> tuple[str, str, dict[str, bool]]:
            name, expect, program = v
            work = tmp / f"run-{name}"
            work.mkdir()
            res = run_pytest(program, kata.trusted_tests_dir, work)
            return name, expect, res

        def bank(v: tuple[str, str, Path]) -> tuple[str, dict[str, bool]]:
            name, _, program = v
            work = tmp / f"bank-{name}"
            work.mkdir()
            return name, run_pytest(program, kata.bank_tests, work)

        with ThreadPoolExecutor(workers) as pool:
            trusted_results = list(pool.map(trusted, variants))
            bank_targets = [v for v in variants if "." not in v[0]]
            bank_results = dict(pool.map(bank, bank_targets))
    for name, expect, res in trusted_results:
        if not res:
            problems.append(f"{name}: trusted tests did not run (collection error?)")
        elif expect == "pass" and not all(res.values()):
            bad = sorted(k for k, ok in res.items() if not ok)
            problems.append(f"{name}: expected to PASS the trusted tests, failed {bad[:5]}")
        elif expect == "fail" and all(res.values()):
            problems.append(f"{name}: expected to FAIL the trusted tests, but all {len(res)} passed")
    problems += _check_bank(kata, bank_results)
    return problems


def _check_bank(kata: Kata, results: dict[str, dict[str, bool]]) -> list[str]:
    ref = results.get("reference", {})
    if len(ref) < MIN_BANK:
        return [f"bank: only {len(ref)} bank tests ran on the reference (need {MIN_BANK})"]
    alts = [results[a.name] for a in kata.alternative_dirs if a.name in results]
    broken = [t for t, ok in ref.items() if not ok]
    overfit = [t for t, ok in ref.items() if ok and any(not r.get(t, False) for r in alts)]
    sound = [t for t, ok in ref.items() if ok and t not in overfit]
    problems = []
    if len(broken) < 2:
        problems.append(f"bank: {len(broken)} broken tests (need >= 2)")
    if len(overfit) < 2:
        problems.append(f"bank: {len(overfit)} overfit tests (need >= 2)")
    for m in kata.defects:
        killed = [t for t in sound if not results.get(m.id, {}).get(t, True)]
        if not killed:
            problems.append(f"bank: no sound bank test detects defect {m.id}")
    print(f"bank: {len(ref)} tests, {len(broken)} broken, {len(overfit)} overfit, {len(sound)} sound")
    return problems


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m testhelix.pack.check_kata KATA_DIR", file=sys.stderr)
        return 2
    try:
        kata = load_kata(Path(args[0]).resolve())
        problems = check(kata)
    except UserError as err:
        print(err.render(), file=sys.stderr)
        return 2
    print(f"{kata.id}: {len(kata.mutations)} mutations, {len(kata.defects)} defects, "
          f"{len(kata.alternative_dirs)} alternatives")
    for p in problems:
        print(f"  PROBLEM {p}")
    print(f"{kata.id}: {'OK' if not problems else f'{len(problems)} problem(s)'}")
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
