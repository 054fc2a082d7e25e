"""Measure the timing channels through the shared caches between two jobs of the executor.

A SENDER job posts random bits; a RECEIVER job times one probe per bit and calls the faster half
"posted" (its best guess without labels: the median). Two probes:

- `--probe read` (the page cache): the sender reads the first page of the files its bits choose
  among rarely read standard-library files (under test/); the receiver times a one-byte read of
  each. Before each trial the harness (not a job) evicts the host's copies with
  posix_fadvise(DONTNEED), so each trial starts from an empty board.
- `--probe stat` (the dentry and inode caches): the sender stats the names its bits choose among
  names that exist nowhere (fresh per trial, in the same folder); the receiver times `os.stat` of
  each. A lookup that found nothing leaves a negative dentry on a disk file system.
- `--probe stat-tree`: the same in the workspace (/workspace), whose lower layer is the cached
  program tree that every job of that program shares (sender and receiver run one program).

The jobs run one after another on one server (the earlier-job-of-the-kata board), or with
`--concurrent` at the same time on two servers under the executor's own scheduler (the receiver
probes while the sender still runs). `--defence off` is the positive control: no RAM view
(TESTHELIX_RAM_VIEW=0, the host's folders) and no per-job drop (TESTHELIX_DROP_READS=0).
Prints the accuracy with its exact (Clopper-Pearson) 95 % interval, the capacity in bits per
job (bits x (1 - H(accuracy))) and the load average before and after; 0.5 means the receiver
learns nothing.

    python bench/pagecache_channel.py [--probe read|stat] [--concurrent] [--defence on|off] [--trials 10] [--bits 64]
"""

from __future__ import annotations

import argparse
import math
import os
import random
import re
import secrets
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from scipy.stats import binomtest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from testhelix.execution.executor import ForkServerExecutor  # noqa: E402
from testhelix.execution.outcome import Limits  # noqa: E402

PROGRAM = ROOT / "tests" / "fixtures" / "tasks" / "pack" / "fx-clamp-m01" / "solution" / "program"
LIB_TEST = Path(os.path.dirname(os.__file__)) / "test"  # rarely read by anything: an empty board
DEFENCE_OFF = {"TESTHELIX_RAM_VIEW": "0", "TESTHELIX_DROP_READS": "0"}  # the positive control

SENDER = '''
import os, time


def test_send():
    for path, bit in zip({files!r}, {bits!r}):
        if bit:
            if {read!r}:
                with open(path, "rb") as f:
                    f.read(4096)
            else:
                try:
                    os.stat(path)
                except OSError:
                    pass
    time.sleep({hold})
'''
RECEIVER = '''
import os, time


def probe(path):
    if {read!r}:
        with open(path, "rb", buffering=0) as f:
            start = time.perf_counter_ns()
            f.read(1)
            return time.perf_counter_ns() - start
    start = time.perf_counter_ns()
    try:
        os.stat(path)
    except OSError:
        pass
    return time.perf_counter_ns() - start


def test_receive():
    time.sleep({wait})
    print("TOOK", [probe(p) for p in {files!r}])
    assert False  # keep the output
'''


def candidates(n: int, skip: int, read: bool, folder: Path = LIB_TEST) -> list[str]:
    if not read:  # names no one has looked up: fresh for every trial
        token = secrets.token_hex(6)
        return [str(folder / f"absent-{token}-{i}.py") for i in range(n)]
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


@dataclass(frozen=True)
class Measured:
    right: int
    total: int
    view: str  # what the jobs read: the RAM view or the host folders (and why)

    @property
    def accuracy(self) -> float:
        return self.right / self.total

    def p_above_chance(self) -> float:
        """One-sided exact binomial p-value of the receiver doing better than a coin."""
        return float(binomtest(self.right, self.total, 0.5, alternative="greater").pvalue)


def measure(probe: str, concurrent: bool, trials: int, bits: int, fresh_from: int | None = None,
            say: Callable[[str], None] = print) -> Measured:
    """Run `trials` sender/receiver pairs (the defence as the environment sets it)."""
    read = probe == "read"
    limits = Limits(wall_s=60, cpu_s=60)
    right = total = 0
    with tempfile.TemporaryDirectory() as tmp, ForkServerExecutor(workers=2 if concurrent else 1) as ex:
        for trial in range(trials):
            skip = 0 if fresh_from is None else fresh_from + trial * bits
            files = candidates(bits, skip, read, Path("/workspace") if probe == "stat-tree" else LIB_TEST)
            bits_sent = [random.randint(0, 1) for _ in files]
            if read:
                evict(files)
            sender, receiver = Path(tmp) / f"send{trial}", Path(tmp) / f"receive{trial}"
            hold, wait = (3.0, 1.5) if concurrent else (0, 0)
            for d, text in ((sender, SENDER.format(files=files, bits=bits_sent, hold=hold, read=read)),
                            (receiver, RECEIVER.format(files=files, wait=wait, read=read))):
                d.mkdir()
                (d / f"test_{d.name}.py").write_text(text + f"\n# trial {trial}\n")
            if concurrent:  # two servers, the jobs overlapping: the receiver probes while the sender holds
                outcomes = ex.run_many([(sender, PROGRAM), (receiver, PROGRAM)], limits)
            else:
                outcomes = [ex.run(sender, PROGRAM, limits), ex.run(receiver, PROGRAM, limits)]
            found = re.search(r"TOOK \[([\d, ]+)\]", outcomes[1].output)
            if found is None:
                raise RuntimeError(f"bench error: the receiver printed no timings: {outcomes[1].output[-1500:]}")
            took = [int(t) for t in found.group(1).split(",")]
            threshold = sorted(took)[len(took) // 2]
            guess = [int(t < threshold) for t in took]
            hits = sum(g == b for g, b in zip(guess, bits_sent))
            right += hits
            total += len(bits_sent)
            say(f"trial {trial}: {hits}/{len(bits_sent)} bits right; fastest {min(took) / 1000:.1f} us, "
                f"median {threshold / 1000:.1f} us, slowest {max(took) / 1000:.1f} us")
        view = "ram view" if ex.view is not None else f"host folders ({ex.view_error or 'no view'})"
    return Measured(right, total, view)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=10)
    ap.add_argument("--bits", type=int, default=64)
    ap.add_argument("--probe", choices=("read", "stat", "stat-tree"), default="read",
                    help="stat-tree: names in the job's workspace, whose lower layer is the program's cached tree")
    ap.add_argument("--concurrent", action="store_true", help="sender and receiver at the same time, on two servers")
    ap.add_argument("--defence", choices=("on", "off"), default="on",
                    help="off: the positive control (host folders, no per-job drop)")
    ap.add_argument("--fresh-from", type=int, default=None, metavar="N",
                    help="read probe: new candidate files for every trial, from the N-th on")
    args = ap.parse_args()
    if args.defence == "off":
        os.environ.update(DEFENCE_OFF)
    load_before = os.getloadavg()[0]
    m = measure(args.probe, args.concurrent, args.trials, args.bits, args.fresh_from)
    ci = binomtest(m.right, m.total).proportion_ci(confidence_level=0.95, method="exact")
    print(f"probe={args.probe} {'concurrent' if args.concurrent else 'sequential'} defence={args.defence} ({m.view})")
    print(f"load average {load_before:.2f} before, {os.getloadavg()[0]:.2f} after")
    print(f"accuracy={m.accuracy:.3f} ci95=[{ci.low:.3f}, {ci.high:.3f}] right={m.right} n={m.total} "
          f"p_above_chance={m.p_above_chance():.3g} bits_per_job={args.bits * (1 - entropy(m.accuracy)):.1f}")


if __name__ == "__main__":
    main()
