"""Measure the plain read-timing page-cache channel between two jobs of the executor.

Every job reads the host's files (the Python installation, /usr) through the same page cache. The
calls that read or clear residency are refused (syscalls.py), but timing a plain read still
tells a page already in memory (microseconds) from one read from disk. This benchmark runs, per
trial, a SENDER job that reads the first page of the files chosen by `--bits` random bits, then a
RECEIVER job that times a one-byte read of each candidate file and calls it "posted" when the read
was fast: exactly the earlier-job-of-the-kata board the label oracle used. Before each trial the
harness (not a job) evicts the candidates with posix_fadvise(DONTNEED), so each trial starts from
an empty board. Reports the bit accuracy and the capacity in bits per job (bits x (1 - H(p))),
with the load average; 50 % accuracy means the receiver learns nothing. With --concurrent the two
jobs overlap on two servers (the receiver reads while the sender still runs).

    python bench/pagecache_channel.py [--trials 5] [--bits 32]
"""

from __future__ import annotations

import argparse
import math
import os
import random
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from testhelix.execution.executor import ForkServerExecutor  # noqa: E402
from testhelix.execution.outcome import Limits  # noqa: E402

PROGRAM = ROOT / "tests" / "fixtures" / "tasks" / "pack" / "fx-clamp-m01" / "solution" / "program"
LIB_TEST = Path(os.path.dirname(os.__file__)) / "test"  # rarely read by anything: an empty board

SENDER = '''
import time


def test_send():
    for path, bit in zip({files!r}, {bits!r}):
        if bit:
            with open(path, "rb") as f:
                f.read(4096)
    time.sleep({hold})
'''
RECEIVER = '''
import time


def test_receive():
    time.sleep({wait})
    took = []
    for path in {files!r}:
        with open(path, "rb", buffering=0) as f:
            start = time.perf_counter_ns()
            f.read(1)
            took.append(time.perf_counter_ns() - start)
    print("TOOK", took)
    assert False  # keep the output
'''


def candidates(n: int, skip: int) -> list[str]:
    files = sorted(str(p) for p in LIB_TEST.rglob("*.py") if p.stat().st_size >= 8 * 1024)
    if len(files) < skip + n:
        raise SystemExit(f"bench error: only {len(files)} candidate files under {LIB_TEST}")
    return files[skip:skip + n]


def evict(files: list[str]) -> None:
    for path in files:
        fd = os.open(path, os.O_RDONLY)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)


def entropy(p: float) -> float:
    return 0.0 if p in (0.0, 1.0) else -(p * math.log2(p) + (1 - p) * math.log2(1 - p))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--bits", type=int, default=32)
    ap.add_argument("--fresh-from", type=int, default=None, metavar="N",
                    help="new candidate files for every trial, from the N-th on: files no one has read since boot "
                         "show what a cache below this kernel's (a hypervisor's) still tells")
    ap.add_argument("--concurrent", action="store_true", help="sender and receiver at the same time, on two servers")
    args = ap.parse_args()
    limits = Limits(wall_s=60, cpu_s=60)
    right = total = 0
    with tempfile.TemporaryDirectory() as tmp, ForkServerExecutor(workers=2 if args.concurrent else 1) as ex:
        for trial in range(args.trials):
            skip = 0 if args.fresh_from is None else args.fresh_from + trial * args.bits
            files = candidates(args.bits, skip)
            bits = [random.randint(0, 1) for _ in files]
            evict(files)
            sender, receiver = Path(tmp) / f"send{trial}", Path(tmp) / f"receive{trial}"
            hold, wait = (3.0, 1.5) if args.concurrent else (0, 0)
            for d, text in ((sender, SENDER.format(files=files, bits=bits, hold=hold)),
                            (receiver, RECEIVER.format(files=files, wait=wait))):
                d.mkdir()
                (d / f"test_{d.name}.py").write_text(text + f"\n# trial {trial}\n")
            if args.concurrent:  # two servers, the jobs overlapping: the receiver reads while the sender holds
                outcomes = ex.run_many([(sender, PROGRAM), (receiver, PROGRAM)], limits)
            else:
                outcomes = [ex.run(sender, PROGRAM, limits), ex.run(receiver, PROGRAM, limits)]
            found = re.search(r"TOOK \[([\d, ]+)\]", outcomes[1].output)
            if found is None:
                raise SystemExit("bench error: the receiver printed no timings")
            took = [int(t) for t in found.group(1).split(",")]
            threshold = sorted(took)[len(took) // 2]  # the receiver's best guess without labels: the median
            guess = [int(t < threshold) for t in took]
            right += sum(g == b for g, b in zip(guess, bits))
            total += len(bits)
            print(f"trial {trial}: {sum(g == b for g, b in zip(guess, bits))}/{len(bits)} bits right; "
                  f"fast {sorted(took)[0] // 1000} us, slow {sorted(took)[-1] // 1000} us")
    p = right / total
    print(f"load average {os.getloadavg()[0]:.2f}")
    print(f"accuracy={p:.3f} bits_per_job={args.bits * (1 - entropy(p)):.1f}")


if __name__ == "__main__":
    main()
