"""Micro-benchmark: the CPU one execution costs, by process, with one fork server.

Runs the same (suite, program) pair `--jobs` times on one server (each repetition is a distinct
cache key, so each one really runs) and reports CPU seconds per job: the executor's own process
(time.process_time), and the fork server and its zygote from /proc/<pid>/stat, each with the
CPU of the children it has reaped (the zygote reaps every keeper, a keeper its test process). CPU
time is what the work costs; unlike wall time it changes little when the machine is loaded (say
the load average with the figures anyway). Not counted: kernel work done in kernel threads (the
asynchronous teardown of a job's network namespace runs in a workqueue).

The FLOOR is the same suite run the same number of times through `pytest.main` in one warm
process, with no isolation at all (the program's modules forgotten between runs, so each run
imports them again, as a job does): no sandbox can cost less. The last line,
`job_cpu_ms=X floor_ms=Y ratio=Z`, compares the two in one run, on the same machine and load.

    python bench/job_cpu.py [--jobs 200] [--task FOLDER]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from testhelix.execution.executor import ForkServerExecutor  # noqa: E402
from testhelix.execution.outcome import Limits, pytest_args  # noqa: E402
from testhelix.execution.workspace import SUITE_SUBDIR  # noqa: E402

TASK = ROOT / "tests" / "fixtures" / "tasks" / "pack" / "fx-clamp-m01"
SUITE = ROOT / "tests" / "fixtures" / "tasks" / "suites" / "good" / "fx-clamp-m01"
TICK = os.sysconf("SC_CLK_TCK")


def _cpu(pid: int) -> float:
    """utime + stime + cutime + cstime of a process, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(f) for f in fields[11:15]) / TICK


def _zygote(server_pid: int) -> int:
    children = Path(f"/proc/{server_pid}/task/{server_pid}/children").read_text().split()
    return int(children[0])


def measure(jobs: int, program: Path, suite: Path) -> dict[str, float]:
    limits = Limits(wall_s=60, cpu_s=60)
    with ForkServerExecutor(workers=1) as ex:
        ex.run_repeat(suite, program, limits, 0)  # start the server, stage the trees
        handle = ex._handles[0]
        assert handle.proc is not None
        server = handle.proc.pid
        zygote = _zygote(server)
        for warm in range(1, 6):
            ex.run_repeat(suite, program, limits, warm)
        host0, server0, zygote0, wall0 = time.process_time(), _cpu(server), _cpu(zygote), time.monotonic()
        statuses = [ex.run_repeat(suite, program, limits, 10 + i).status for i in range(jobs)]
        time.sleep(0.5)  # the last keepers exit and are reaped
        ex.run_repeat(suite, program, limits, 9)  # the zygote reaps at its next fork
        host1, server1, zygote1, wall1 = time.process_time(), _cpu(server), _cpu(zygote), time.monotonic()
    ms = 1000.0 / jobs
    return {"host_ms": (host1 - host0) * ms, "server_ms": (server1 - server0) * ms,
            "zygote_and_jobs_ms": (zygote1 - zygote0) * ms, "wall_ms": (wall1 - wall0) * ms,
            "passed": statuses.count("pass") / jobs}


def floor(jobs: int, program: Path, suite: Path) -> float:
    """CPU ms per run of the suite through pytest.main in this process, warm, without isolation."""
    import pytest

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        shutil.copytree(program, work, dirs_exist_ok=True)
        shutil.copytree(suite, work / SUITE_SUBDIR)
        program_modules = {p.name.split(".")[0] for p in program.iterdir()}
        args = [*pytest_args(Limits()), "-p", "no:cacheprovider", str(work / SUITE_SUBDIR)]
        sys.path.insert(0, str(work))
        cwd = os.getcwd()
        os.chdir(work)
        try:
            def once() -> int:
                for name in [m for m in sys.modules if m.split(".")[0] in program_modules or m.startswith("test_")]:
                    del sys.modules[name]
                with contextlib.redirect_stdout(io.StringIO()):
                    return int(pytest.main(args))

            for _ in range(5):  # warm, like the executor's server
                once()
            start = time.process_time()
            codes = [once() for _ in range(jobs)]
            spent = time.process_time() - start
        finally:
            os.chdir(cwd)
            sys.path.remove(str(work))
    assert codes.count(0) == jobs, f"the floor's runs did not all pass: {set(codes)}"
    return spent * 1000.0 / jobs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=200)
    ap.add_argument("--task", type=Path, default=TASK)
    args = ap.parse_args()
    r = measure(args.jobs, args.task / "solution" / "program", SUITE)
    total = r["host_ms"] + r["server_ms"] + r["zygote_and_jobs_ms"]
    print(f"load average {os.getloadavg()[0]:.2f}; per job, CPU ms: executor {r['host_ms']:.2f}, "
          f"server {r['server_ms']:.2f}, zygote+keeper+test {r['zygote_and_jobs_ms']:.2f}; wall {r['wall_ms']:.1f} ms "
          f"({r['passed']:.0%} passed)")
    floor_ms = floor(args.jobs, args.task / "solution" / "program", SUITE)
    print(f"job_cpu_ms={total:.2f} floor_ms={floor_ms:.2f} ratio={total / floor_ms:.2f}")


if __name__ == "__main__":
    main()
