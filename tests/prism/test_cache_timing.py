"""Timing channels through the caches every job shares: the page cache (read timing) and the
dentry and inode caches (stat timing, in the read-only folders and in the workspace, whose lower
layers are cached trees shared by every job of a program or suite), between jobs at the same time
on two servers and between jobs one after another on one server.

Each reproducer is bench/pagecache_channel.py's sender and receiver (the receiver calls the faster
half of its probes "posted"). With the RAM view (ram_view.py) the receiver must not beat a coin
(one-sided exact binomial p above 0.001); the positive control runs the same pair with the
defence off (host folders, no per-job drop) and must carry the bits (p below 1e-6).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bench.pagecache_channel import DEFENCE_OFF, measure
from testhelix.execution import ram_view
from testhelix.execution.executor import ForkServerExecutor
from testhelix.execution.outcome import Limits
from testhelix.execution.sandbox import namespaces_available

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
PROGRAM = FIXTURES / "tasks" / "pack" / "fx-clamp-m01" / "solution" / "program"

pytestmark = [pytest.mark.skipif(not namespaces_available(), reason="needs root and unshare (namespaced sandbox)"),
              pytest.mark.slow]
CASES = [("read", True), ("stat", True), ("read", False), ("stat", False), ("stat-tree", False)]
IDS = ["read-concurrent", "stat-concurrent", "read-sequential", "stat-sequential", "stat-workspace-sequential"]


@pytest.mark.parametrize(("probe", "concurrent"), CASES, ids=IDS)
def test_a_timing_oracle_does_not_beat_chance(probe, concurrent, monkeypatch):
    monkeypatch.delenv(ram_view.RAM_VIEW_ENV, raising=False)
    m = measure(probe, concurrent, trials=3, bits=48, say=lambda _: None)
    assert m.view == "ram view"
    assert m.p_above_chance() > 1e-3, (m.right, m.total)


@pytest.mark.parametrize(("probe", "concurrent"), CASES, ids=IDS)
def test_with_the_defence_off_the_same_oracle_reads_the_bits(probe, concurrent, monkeypatch):
    for name, value in DEFENCE_OFF.items():
        monkeypatch.setenv(name, value)
    # The workspace probe carries fewer bits (0.69 to 0.75 measured under load): more of them.
    trials, bits = (4, 64) if probe == "stat-tree" else (2, 48)
    m = measure(probe, concurrent, trials=trials, bits=bits, say=lambda _: None)
    assert m.view.startswith("host folders")
    assert m.p_above_chance() < 1e-6, (m.right, m.total)


PROBE = '''
import os


def test_view():
    here = {present!r}
    print("SEEN", sorted(p for p in here if os.path.exists(p)))
    assert False
'''


def test_jobs_read_only_the_view_which_stays_in_memory(tmp_path, monkeypatch):
    """What a job sees of /usr is the view's copy (a program the view leaves out is absent), and
    the view is a tmpfs that cannot be swapped out (or no swap is on)."""
    monkeypatch.delenv(ram_view.RAM_VIEW_ENV, raising=False)
    absent = next((p for p in ("/usr/bin/gcc", "/usr/bin/perl", "/usr/bin/make", "/usr/bin/git")
                   if os.path.exists(p) and os.path.basename(p) not in ram_view.TOOLS), None)
    if absent is None:
        pytest.skip("no program outside the view's list on this host")
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "test_view.py").write_text(PROBE.format(present=["/usr/bin/env", "/etc/passwd", absent]))
    with ForkServerExecutor(workers=1, sandbox="namespaced") as ex:
        out = ex.run(suite, PROGRAM, Limits(wall_s=60, cpu_s=60))
        view = ex.view
    assert view is not None
    assert f"SEEN {['/etc/passwd', '/usr/bin/env']!r}" in out.output, out.output[-2000:]
    options = next(line.split()[-1] for line in Path("/proc/self/mountinfo").read_text().splitlines()
                   if line.split()[4] == str(ram_view.VIEWS))
    fstype = next(line.split(" - ")[1].split()[0] for line in Path("/proc/self/mountinfo").read_text().splitlines()
                  if line.split()[4] == str(ram_view.VIEWS))
    assert fstype == "ramfs" or "noswap" in options or not ram_view.swap_active(), (fstype, options)
