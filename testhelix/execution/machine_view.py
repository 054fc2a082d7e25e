"""What a job sees of the machine: files with inodes of its fork server's own, and constant counters.

Two kinds of kernel state are shared by whatever can name the same file, and would let one job
tell another something without any file being written:

- locks and change notifications hang on an inode. The read-only folders every job sees (/usr,
  /etc, the Python installation) are therefore mounted per fork server as a read-only overlay
  (`lowerdir=<host folder>:<an empty folder>`): an overlay has inodes of its own, so a POSIX or
  OFD lock a job takes on /usr/lib/python3/x.py is invisible to a job of any other server (and a
  server runs one job at a time; the supervisor waits for a job's last process before the next
  one starts); with the RAM view each job even overlays it afresh (sandbox.py). Device nodes are
  made per server for the same reason. The page cache is NOT per overlay: reads go to the lower
  file's pages, which is why the lower layer is the RAM view (ram_view.py) where there is one.
- machine-wide counters in /proc move with every other job's activity (free memory, CPU time,
  load, pressure, open files). A job's /proc is its PID namespace's own, but these files are not
  namespaced; each is covered by a bind mount of a constant copy: the host's text with every
  number zeroed (its shape kept, so parsers still work), written once per server.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from testhelix.execution.syscalls import MS_BIND, MS_NODEV, MS_NOSUID, MS_RDONLY, bind_readonly, mount

# /proc files that count the whole machine and that a suite has no reason to read live.
MACHINE_COUNTERS = (
    "meminfo", "stat", "loadavg", "uptime", "vmstat", "zoneinfo", "buddyinfo", "diskstats", "interrupts",
    "softirqs", "schedstat", "cpuinfo", "key-users", "pressure/cpu", "pressure/memory", "pressure/io",
    "pressure/irq", "sys/fs/file-nr", "sys/fs/inode-nr", "sys/fs/inode-state", "sys/fs/dentry-state",
    "sys/fs/dentry-negative", "sys/fs/aio-nr", "sys/kernel/random/entropy_avail", "sys/kernel/pty/nr",
)
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w.])")
_FIXED = {"loadavg": "0.00 0.00 0.00 1/1 1\n", "uptime": "1.00 0.00\n"}
_MEMORY_KB = 1024 * 1024  # meminfo's MemTotal/MemFree/MemAvailable: a constant, not the host's


def view_readonly(host: str, target: str, empty: Path) -> bool:
    """`host` at `target`, read-only, with inodes of this mount's own (an overlay with no upper
    layer; True); a plain read-only bind where overlayfs refuses (False). Both layers are named
    by descriptor, so mountinfo shows no host folder (nor the RAM view's)."""
    lower = os.open(host, os.O_PATH | os.O_DIRECTORY)
    fd = os.open(empty, os.O_PATH | os.O_DIRECTORY)
    try:
        mount("overlay", target, "overlay", MS_RDONLY | MS_NOSUID | MS_NODEV,
              f"lowerdir=/proc/self/fd/{lower}:/proc/self/fd/{fd}")
        return True
    except OSError:
        pass
    finally:
        os.close(fd)
        os.close(lower)
    bind_readonly(host, target)
    return False


def private_scratch(folder: Path) -> Path:
    """A small tmpfs of the server's own for the empty layer and the constant copies: bind mounts
    of its files show in a job's mountinfo as `/meminfo` on `tmpfs`, naming no host folder."""
    folder.mkdir(parents=True, exist_ok=True)
    mount("tmpfs", str(folder), "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=4m")
    (folder / "empty").mkdir()
    return folder


def constant_text(name: str, text: str) -> str:
    """The constant view of one /proc file: every number zeroed (digits kept, so widths and
    parsers are unchanged); for cpuinfo only the clock, which follows the load."""
    if name in _FIXED:
        return _FIXED[name]
    if name == "cpuinfo":
        return re.sub(r"^(cpu MHz\s*:\s*)[\d.]+$", r"\g<1>1000.000", text, flags=re.M)
    zeroed = _NUMBER.sub(lambda m: re.sub(r"\d", "0", m.group()), text)
    if name == "meminfo":
        zeroed = re.sub(r"^(MemTotal|MemFree|MemAvailable):(\s+)0+ kB$", rf"\1:\g<2>{_MEMORY_KB} kB", zeroed,
                        flags=re.M)
    return zeroed


def write_constant_proc(folder: Path, proc: Path = Path("/proc")) -> list[tuple[str, str]]:
    """Write the constant copies (of the counters this kernel has and a job could read) into
    `folder`; returns (copy, name under /proc) pairs for `hide_machine_counters`."""
    folder.mkdir(parents=True, exist_ok=True)
    pairs = []
    for name in MACHINE_COUNTERS:
        source = proc / name
        try:
            if not source.stat().st_mode & 0o004:  # not readable by a job's uid anyway
                continue
            text = source.read_text()
        except OSError:
            continue
        copy = folder / name.replace("/", "_")
        copy.write_text(constant_text(name, text))
        copy.chmod(0o444)
        pairs.append((str(copy), name))
    return pairs


def hide_machine_counters(root: str, pairs: list[tuple[str, str]]) -> None:
    """Cover ROOT/proc/<name> with its constant copy; call after the job's /proc is mounted. The
    copies are root's and read-only to the job; a counter this kernel lacks was never written."""
    for copy, name in pairs:
        mount(copy, os.path.join(root, "proc", name), None, MS_BIND)
