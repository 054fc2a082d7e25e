"""Rerun the README's main command as a log would see it, and write docs/demo-transcript.md.

The commands are read from the README's "Set up on a fresh machine" block (the `autosaddler ...`
steps of its one-line command; the venv and pip steps are skipped, the package must already be
installed in the Python that runs this script). They run in a fresh temporary folder with HOME,
TESTHELIX_CACHE_DIR and AUTOSADDLER_DATA_DIR pointed at fresh temporary folders too, COLUMNS=80,
and stdout and stderr piped into one log (not a terminal), exactly as CI or `cmd 2>&1 | tee log`
would record them.

The transcript is the log trimmed only in one way: of each run of consecutive progress lines
(`task evaluations: ...`, printed every ~10 s in a log) the first and the last are kept, and the
number left out is said in their place. Nothing else is removed or edited.

Run (takes minutes; the demo uses simulated models): nice -n 15 python bench/demo_transcript.py
Options: --out PATH (default docs/demo-transcript.md), --log PATH (also keep the untrimmed log).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROGRESS = re.compile(r"^(task evaluations|release gate): \d")  # TaskProgress lines in a log


def readme_commands(readme: Path) -> list[list[str]]:
    """The `autosaddler` steps of the README's first bash block that runs a search."""
    blocks = re.findall(r"```bash\n(.*?)```", readme.read_text(), flags=re.S)
    main = next((b for b in blocks if "autosaddler search" in b), None)
    if main is None:
        sys.exit(f"{readme}: no bash block with `autosaddler search` found")
    steps = [shlex.split(step) for step in " ".join(main.split("\n")).split("&&")]
    return [s for s in steps if s and s[0] == "autosaddler"]


def trim(lines: list[str]) -> list[str]:
    """Keep the first and last line of each run of progress lines; say how many were left out."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        if not PROGRESS.match(lines[i]):
            out.append(lines[i])
            i += 1
            continue
        j = i
        while j < len(lines) and PROGRESS.match(lines[j]):
            j += 1
        run = lines[i:j]
        out.append(run[0])
        if len(run) > 2:
            out.append(f"[... {len(run) - 2} more progress lines like these, one every ~10 s ...]")
        if len(run) > 1:
            out.append(run[-1])
        i = j
    return out


def shell_lines(argv: list[str], width: int = 80) -> list[str]:
    """The command as a shell prompt shows it, continued with backslashes to fit `width`."""
    lines, line = [], "$"
    for word in (shlex.quote(a) for a in argv):
        if len(line) + 1 + len(word) + 2 > width and line not in ("$", "   "):
            lines.append(line + " \\")
            line = "   "
        line += " " + word
    return lines + [line]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "demo-transcript.md")
    parser.add_argument("--log", type=Path, default=None)
    args = parser.parse_args()
    bin_dir = Path(sys.executable).parent
    commands = readme_commands(ROOT / "README.md")
    with tempfile.TemporaryDirectory(prefix="demo-transcript-") as tmp:
        work = Path(tmp)
        env = {**os.environ, "COLUMNS": "80", "HOME": str(work / "home"),
               "TESTHELIX_CACHE_DIR": str(work / "cache"), "AUTOSADDLER_DATA_DIR": str(work / "data")}
        env.pop("XDG_DATA_HOME", None)
        env.pop("XDG_CACHE_HOME", None)
        (work / "home").mkdir()
        log: list[str] = []
        load_before = os.getloadavg()[0]
        cpu_before = _children_cpu()
        started = time.monotonic()
        for argv in commands:
            log += shell_lines(argv)
            done = subprocess.run([str(bin_dir / argv[0]), *argv[1:]], cwd=work, env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, text=True)
            log += done.stdout.splitlines()
            if done.returncode != 0:
                log.append(f"[exit status {done.returncode}]")
                break
        wall = time.monotonic() - started
        cpu = _children_cpu() - cpu_before
    load = os.getloadavg()
    if args.log is not None:
        args.log.write_text("\n".join(log) + "\n")
    widest = max(len(line) for line in log)
    widest_other = max((len(line) for line in log if not PROGRESS.match(line)), default=0)
    body = trim(log)
    args.out.write_text("\n".join([
        "# The README demo, as a log records it (80 columns, output piped)",
        "",
        "The README's main command ([Set up on a fresh machine](../README.md#set-up-on-a-fresh-machine)), "
        "run by `bench/demo_transcript.py` in a fresh folder with fresh HOME, cache and data folders, "
        "`COLUMNS=80`, and stdout and stderr piped into one log. **The models are simulated** "
        "(`sim:weak`, `sim:strong`): deterministic test doubles, so the scores below measure the "
        "simulation and the harness, not a model.",
        "",
        f"Wall clock {wall / 60:.1f} min on a 2-core machine (1-minute load average {load_before:.2f} "
        f"before the run and {load[0]:.2f} at its end, the run's own work included); the commands' own CPU "
        f"time (user + system, every process they started) {cpu:.0f} s, which on a quiet machine bounds the "
        f"wall clock from below by {cpu / 2:.0f} s on two cores. Widest line {widest} "
        f"columns; widest line other than progress lines {widest_other} (progress lines, node lines, "
        "notices, the closing summaries and the commands are fitted or wrapped to 80 columns; a single "
        "word longer than that, such as a long path, is the one thing left longer). Only the periodic "
        "progress lines are trimmed (the first and last of each run are "
        "kept); rerun `nice -n 15 python bench/demo_transcript.py` to refresh this page.",
        "",
        "```",
        *body,
        "```",
        "",
    ]))
    print(f"wrote {args.out} ({len(body)} of {len(log)} lines; widest {widest}; {wall:.0f} s wall, {cpu:.0f} s CPU)")


def _children_cpu() -> float:
    """User + system CPU seconds of every finished child process (and theirs) so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


if __name__ == "__main__":
    main()
