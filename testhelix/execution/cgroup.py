"""A control group per execution: one memory, process-count and CPU limit over ALL of a job's processes.

Rlimits are per process (memory, CPU time) or per uid (processes), so eight forked children could
each take the whole memory limit, and pages a job writes into its tmpfs count against none of
them. A cgroup covers the job as a whole, tmpfs pages included (they are charged to the memory
cgroup of the process that wrote them), and tells the harness afterwards what was exceeded:

    memory   limit = Limits.memory_mb; an exceeded limit is an OOM kill, counted by the kernel;
             socket buffers count too (v2: in memory.max; v1: a share of the limit in
             memory.kmem.tcp, whose refusals the supervisor turns into the same verdict)
    pids     limit = Limits.nproc tasks (threads count); refused forks are counted
    cpu      bandwidth of one core (quota = period); CPU *time* stays an rlimit (SIGXCPU)

Both hierarchies are supported:

- cgroup v1 (what our machines and CI run): one folder per job under `<mount>/testhelix-prism/` in
  the `memory` and `pids` hierarchies (`memory.limit_in_bytes`, `pids.max`; counters
  `memory.oom_control: oom_kill` and `pids.events: max`), and `testhelix-prism-<job>` beside the
  harness's own group in the `cpu` hierarchy (`cpu.cfs_quota_us`). Why beside: in v1 a group
  weighs as much as one process against its siblings, so jobs nested under one shared parent would
  together get one process's share of a busy machine (6x slower per job at a load of 12); beside
  the harness, each job gets what one of its processes would, and the quota still caps it at a core;
- cgroup v2 where the unified hierarchy offers the controllers (`memory.max`, `pids.max`,
  `cpu.max`; counters in `memory.events` and `pids.events`; `cgroup.kill` to end a job).

Fallback where neither is writable (not root, or no controllers): no cgroup, and the per-process
rlimits (RLIMIT_AS, RLIMIT_NPROC per uid) are the only memory and process limits -- then a job's
children together may use several times the memory limit, and exhausting a limit shows up as
whatever the suite does with the resulting exception. `Cgroups.detect()` says which one applies.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

from testhelix.execution.outcome import Limits

ROOT = Path("/sys/fs/cgroup")
PARENT = "testhelix-prism"
CPU_PERIOD_US = 100_000
CGROUPS_ENV = "TESTHELIX_CGROUPS"  # "0": no job cgroups (measuring their cost, or a machine that misbehaves)


def _write(path: Path, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


def _read_int(path: Path) -> int:
    try:
        return int(path.read_text())
    except (OSError, ValueError):
        return 0


def _counter(path: Path, key: str) -> int:
    try:
        for line in path.read_text().splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    except (OSError, ValueError):
        pass
    return 0


@dataclass
class JobCgroup:
    version: int
    dirs: dict[str, Path]  # controller -> folder (v2: one folder under key "unified")

    def add(self, pid: int) -> None:
        for d in self.dirs.values():
            _write(d / "cgroup.procs", str(pid))

    def exceeded(self) -> str | None:
        """The limit this job ran into, as the kernel counted it (None: none)."""
        if self.version == 1:
            memory = _counter(self.dirs["memory"] / "memory.oom_control", "oom_kill") or self.over_limit()
            pids = _counter(self.dirs["pids"] / "pids.events", "max")
        else:
            memory = _counter(self.dirs["unified"] / "memory.events", "oom_kill")
            pids = _counter(self.dirs["unified"] / "pids.events", "max")
        if memory:
            return "memory"
        if pids:
            return "processes"
        return None

    def over_limit(self) -> bool:
        """cgroup v1 charges socket buffers to a counter of their own (memory.kmem.tcp), which
        refuses more but kills nothing: a job that reached it is over its memory limit, and the
        supervisor ends it (v2 charges them to memory.max, whose OOM kill is counted above). The
        kernel counts few refusals (it shrinks buffers under pressure instead), so the peak counts."""
        if self.version != 1:
            return False
        d = self.dirs["memory"]
        limit = _read_int(d / "memory.kmem.tcp.limit_in_bytes")
        return _read_int(d / "memory.kmem.tcp.failcnt") > 0 or 0 < limit <= _read_int(d / "memory.kmem.tcp.max_usage_in_bytes")

    def kill_all(self) -> None:
        """SIGKILL every process still in the job (also those that left its session)."""
        if self.version == 2:
            try:
                _write(self.dirs["unified"] / "cgroup.kill", "1")
                return
            except OSError:
                pass
        procs = self.dirs.get("pids") or next(iter(self.dirs.values()))
        for _ in range(50):
            try:
                pids = [int(p) for p in (procs / "cgroup.procs").read_text().split()]
            except (OSError, ValueError):
                return
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.002)

    def remove(self) -> None:
        """rmdir every folder; a job's last processes may take a moment to leave. Never raises."""
        for d in self.dirs.values():
            for attempt in range(100):
                try:
                    os.rmdir(d)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.005 if attempt < 20 else 0.02)


class Cgroups:
    """Makes one `JobCgroup` per execution (or None where cgroups are unavailable)."""

    def __init__(self, version: int | None, bases: dict[str, Path], prefixes: dict[str, str] | None = None):
        self.version, self.bases = version, bases
        self.prefixes = prefixes or {}  # controller -> prefix of a job folder's name

    @classmethod
    def detect(cls, root: Path = ROOT) -> Cgroups:
        if os.environ.get(CGROUPS_ENV) == "0":
            return cls(None, {})
        v2 = _v2_base(root)
        if v2 is not None:
            return cls(2, {"unified": v2})
        bases = {}
        for ctrl in ("memory", "pids"):
            base = root / ctrl / PARENT
            try:
                base.mkdir(exist_ok=True)
            except OSError:
                return cls(None, {})  # memory and pids are required
            bases[ctrl] = base
        cpu = root / "cpu" / own_v1_group("cpu").lstrip("/")  # cpu bandwidth is a bonus (see above)
        probe = cpu / f"{PARENT}-probe-{os.getpid()}"
        try:
            probe.mkdir()
            os.rmdir(probe)
            bases["cpu"] = cpu
        except OSError:
            pass
        return cls(1, bases, {"cpu": PARENT + "-"})

    @property
    def kind(self) -> str:
        return f"v{self.version}" if self.version else "none"

    def create(self, name: str, limits: Limits) -> JobCgroup | None:
        if self.version is None:
            return None
        dirs = {k: base / (self.prefixes.get(k, "") + name) for k, base in self.bases.items()}
        made = JobCgroup(self.version, {})
        try:
            for k, d in dirs.items():
                d.mkdir()
                made.dirs[k] = d
            _configure(made, limits)
        except OSError:
            made.remove()
            return None
        return made


def _configure(cg: JobCgroup, limits: Limits) -> None:
    memory = str(limits.memory_mb * 1024 * 1024)
    if cg.version == 1:
        tcp = cg.dirs["memory"] / "memory.kmem.tcp.limit_in_bytes"
        if tcp.exists():  # socket buffers: a share of the job's memory, so both together stay within it
            share = tcp_share(limits.memory_mb)
            _write(tcp, str(share))
            memory = str(limits.memory_mb * 1024 * 1024 - share)
        _write(cg.dirs["memory"] / "memory.limit_in_bytes", memory)
        swap = cg.dirs["memory"] / "memory.memsw.limit_in_bytes"
        if swap.exists():  # swap accounting on: memory + swap capped together
            _write(swap, memory)
        _write(cg.dirs["pids"] / "pids.max", str(limits.nproc))
        if "cpu" in cg.dirs:
            _write(cg.dirs["cpu"] / "cpu.cfs_period_us", str(CPU_PERIOD_US))
            _write(cg.dirs["cpu"] / "cpu.cfs_quota_us", str(CPU_PERIOD_US))
    else:
        d = cg.dirs["unified"]
        _write(d / "memory.max", memory)
        if (d / "memory.swap.max").exists():
            _write(d / "memory.swap.max", "0")
        _write(d / "pids.max", str(limits.nproc))
        if (d / "cpu.max").exists():
            _write(d / "cpu.max", f"{CPU_PERIOD_US} {CPU_PERIOD_US}")


def tcp_share(memory_mb: int) -> int:
    """Bytes of a job's memory limit set aside for its socket buffers on cgroup v1: an eighth,
    at least 16 MB (a loopback server and its client need a few)."""
    return max(16, memory_mb // 8) * 1024 * 1024


def own_v1_group(controller: str, proc_cgroup: Path = Path("/proc/self/cgroup")) -> str:
    """This process's group in a v1 hierarchy ("/" when not found)."""
    try:
        for line in proc_cgroup.read_text().splitlines():
            _hierarchy, controllers, path = line.split(":", 2)
            if controller in controllers.split(","):
                return path or "/"
    except (OSError, ValueError):
        pass
    return "/"


def _v2_base(root: Path) -> Path | None:
    """A writable folder of the unified hierarchy whose children get memory and pids (and cpu)."""
    for mount in (root, root / "unified"):
        try:
            controllers = (mount / "cgroup.controllers").read_text().split()
        except OSError:
            continue
        if not {"memory", "pids"} <= set(controllers):
            continue
        base = mount / PARENT
        wanted = [c for c in ("memory", "pids", "cpu") if c in controllers]
        try:
            _write(mount / "cgroup.subtree_control", " ".join("+" + c for c in wanted))
        except OSError:
            pass  # already enabled, or not ours to change: the next write tells
        try:
            base.mkdir(exist_ok=True)
            _write(base / "cgroup.subtree_control", " ".join("+" + c for c in wanted))
            return base
        except OSError:
            continue
    return None
