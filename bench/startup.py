"""CPU time of `--help` for each console script, against `python -m pytest --help` in the same run.

Goal: each of `testhelix --help`, `autosaddler --help`, `gtdd --help` under 0.4 s of CPU (user +
system of the child process). The baseline is measured here, in the same run, so the ratio stays
meaningful on a loaded or slower machine. Each command runs REPEATS times; the median is shown.

Run: python bench/startup.py
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys

REPEATS = 5
GOAL_S = 0.4
COMMANDS = {
    "pytest --help (baseline)": [sys.executable, "-m", "pytest", "--help"],
    **{f"{name} --help": [sys.executable, "-c", f"from {name}.cli import main; main(['--help'])"]
       for name in ("testhelix", "autosaddler", "gtdd")},
}


def cpu_seconds(argv: list[str]) -> float:
    """User + system CPU of one child run (from the children's rusage before and after)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    medians = {label: statistics.median(cpu_seconds(argv) for _ in range(REPEATS)) for label, argv in COMMANDS.items()}
    baseline = medians["pytest --help (baseline)"]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"median CPU of {REPEATS} runs each (load average {load:.2f}):")
    for label, seconds in medians.items():
        ratio = "" if label.startswith("pytest") else (
            f"  ratio to pytest {seconds / baseline:.2f}  {'ok' if seconds < GOAL_S else 'OVER'} (goal < {GOAL_S} s)")
        print(f"  {label:26} {seconds:.3f} s{ratio}")
    print("startup: " + ", ".join(f"{label.split()[0]} {s:.3f} s" for label, s in medians.items())
          + "; ratios to pytest --help: "
          + ", ".join(f"{label.split()[0]} {s / baseline:.2f}" for label, s in medians.items()
                      if not label.startswith("pytest")))


if __name__ == "__main__":
    main()
