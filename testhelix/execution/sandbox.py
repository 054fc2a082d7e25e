"""Isolation of one execution: namespaces, a private filesystem view, a scrubbed environment, rlimits.

Two implementations of the small `Sandbox` protocol:

- `NamespaceSandbox` (root + util-linux `unshare`, the normal case on our machines and in CI). The
  fork server is launched inside new network, mount, IPC and UTS namespaces, so neither it nor any
  child has a network. Every execution starts as PID 1 of a new PID namespace with a network
  namespace of its own (only its own loopback, up), which unshares a mount, IPC and cgroup
  namespace of its own, mounts the workspace (overlays of
  the cached program and suite trees over a private tmpfs, see overlay.py; or a hard-linked folder
  the server built, where overlayfs is missing) into a minimal root (read-only /usr, /etc, the
  Python installation as overlays of the RAM view of the job's own, see ram_view.py, or of the
  host folders of the server's own, a few /dev nodes of its own, a private /proc
  with constant machine-wide counters, see machine_view.py, and a private /tmp) and chroots there, so task
  folders, other workspaces and the cached trees are not reachable by any path. The test process
  then drops to an unprivileged per-server uid (so RLIMIT_NPROC applies and it cannot mount, chroot
  back out, or signal the harness), sets no_new_privs and its rlimits. When PID 1 exits the kernel
  kills everything left in the namespace, including children that escaped into new sessions.
- `PlainSandbox`, the documented WEAKER fallback where namespaces are unavailable: a fresh
  workspace, a new session killed as a group, rlimits, the scrubbed environment, and network calls
  refused by an audit hook (Python-level only: native code can still open sockets). The host file
  system stays reachable; do not run untrusted suites this way on a machine with secrets.

The few namespace and mount syscalls are in syscalls.py; the steps of a job's process that GTDD's
trace isolation shares (forking PID 1, fresh temporary mounts, becoming the sandbox uid) in jobprocess.py.
"""

from __future__ import annotations

import fcntl
import os
import resource
import shutil
import socket
import stat
import struct
import subprocess
import sys
from functools import lru_cache
from pathlib import Path
from typing import Protocol

from testhelix.execution.jobprocess import become_user, fork_as_pid1, mount_fresh_temp, mount_own_proc
from testhelix.execution.machine_view import (
    hide_machine_counters,
    private_scratch,
    view_readonly,
    write_constant_proc,
)
from testhelix.execution.masking import mask, paths_from_env
from testhelix.execution.outcome import Limits
from testhelix.execution.overlay import Layers, mount_layers, overlay_supported
from testhelix.execution.ram_view import lower_for
from testhelix.execution.syscalls import (
    CLONE_NEWCGROUP,
    CLONE_NEWIPC,
    CLONE_NEWNET,
    CLONE_NEWNS,
    MS_BIND,
    MS_NODEV,
    MS_NOSUID,
    MS_REMOUNT,
    PR_SET_NO_NEW_PRIVS,
    deny_unix_sockets,
    mount,
    prctl,
    unshare,
)
from testhelix.execution.workspace import INSIDE_WORKSPACE

OVERLAY_ENV = "TESTHELIX_OVERLAY"
HOST_PREFIX_ENV = "TESTHELIX_HOST_PREFIX"  # set by the executor for a server under a task environment
PLUGIN_DIR_NAME = "prism-plugin"

def loopback_up() -> None:
    """Bring `lo` up in a fresh network namespace (tests may use localhost servers)."""
    siocgifflags, siocsifflags, iff_up = 0x8913, 0x8914, 0x1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        req = fcntl.ioctl(s, siocgifflags, struct.pack("16sH22x", b"lo", 0))
        flags = struct.unpack("16sH22x", req)[1]
        fcntl.ioctl(s, siocsifflags, struct.pack("16sH22x", b"lo", flags | iff_up))


def sandbox_env(home: str, tmp: str, pythonpath: str) -> dict[str, str]:
    """The whole environment of an execution: an allow-list, never the host's variables."""
    bin_dirs = [os.path.dirname(sys.executable), "/usr/local/bin", "/usr/bin", "/bin"]
    return {
        "PATH": ":".join(dict.fromkeys(bin_dirs)), "HOME": home, "TMPDIR": tmp, "PYTHONPATH": pythonpath,
        "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
        "TZ": "UTC", "USER": "sandbox", "LOGNAME": "sandbox", "TERM": "dumb", "PY_COLORS": "0",
    }


def apply_rlimits(limits: Limits, with_nproc: bool, cgroup: bool = False) -> None:
    """Per-process limits. With a job cgroup, memory and process count are the cgroup's (over the
    whole job, and counted, so an exceeded limit is recognised); RLIMIT_NPROC then sits just above
    the cgroup's limit as a backstop, and no RLIMIT_AS (virtual reservations are not memory)."""
    mb = 1024 * 1024
    # soft < hard for CPU so the process gets SIGXCPU first (classified as a cpu limit).
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_s, limits.cpu_s + 1))
    if not cgroup:
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory_mb * mb, limits.memory_mb * mb))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits.fsize_mb * mb, limits.fsize_mb * mb))
    resource.setrlimit(resource.RLIMIT_NOFILE, (limits.nofile, limits.nofile))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    if with_nproc:
        nproc = limits.nproc + 2 if cgroup else limits.nproc
        resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))


_NETWORK_EVENTS = {"socket.connect", "socket.bind", "socket.sendto", "socket.sendmsg", "socket.getaddrinfo"}


def install_network_block() -> None:
    """Weaker fallback: refuse Python-level internet socket use in this process (cannot be removed)."""

    def hook(event: str, args: tuple) -> None:
        if event not in _NETWORK_EVENTS:
            return
        sock = args[0] if args else None
        family = getattr(sock, "family", None)
        if event == "socket.getaddrinfo" or family in (socket.AF_INET, socket.AF_INET6):
            raise PermissionError("network access is disabled in the TestPrism sandbox")

    sys.addaudithook(hook)


SITECUSTOMIZE = (
    "# Written by the TestPrism plain sandbox: refuse Python-level network use (weaker fallback).\n"
    "import socket, sys\n"
    "_EV = {'socket.connect', 'socket.bind', 'socket.sendto', 'socket.sendmsg', 'socket.getaddrinfo'}\n"
    "def _hook(event, args):\n"
    "    if event in _EV and (event == 'socket.getaddrinfo' or getattr(args[0], 'family', None) in\n"
    "                         (socket.AF_INET, socket.AF_INET6)):\n"
    "        raise PermissionError('network access is disabled in the TestPrism sandbox')\n"
    "sys.addaudithook(_hook)\n"
)


def write_plugin_dir(target: Path) -> None:
    target.mkdir(parents=True, exist_ok=True)
    (target / "sitecustomize.py").write_text(SITECUSTOMIZE)


class Sandbox(Protocol):
    """Isolation of one execution. Found by name, dotted path or entry point (seam.select_sandbox);
    code using a sandbox asks these members and never branches on `kind`, which only names it."""

    kind: str  # "namespaced" | "plain" | a plug-in's own name (shown in records and cache keys)
    private_root: bool  # the job sees a root of its own (own /tmp; other workspaces unreachable by path)
    links_programs: bool  # may workspaces hard-link cached read-only files (needs a non-owner uid)
    drops_privileges: bool  # the test process runs under a dedicated uid
    pid_namespace: bool  # fork_job's child is PID 1 of a PID namespace of its own
    builds_workspace: bool  # False: enter_job mounts the workspace from `Layers` (nothing to build or delete)
    spec: str  # what seam.select_sandbox found it by (it sets this); a child process passes it back there

    def launch_prefix(self) -> list[str]: ...  # argv prefix that starts the fork server isolated
    def setup_server(self, server_dir: Path) -> None: ...  # once, inside the server process
    def fork_job(self) -> int: ...  # os.fork() for the job's first process
    def enter_job(self, workspace: Path | Layers, limits: Limits) -> str: ...  # PID 1 / the keeper; returns cwd
    def confine(self, limits: Limits, uid: int, cgroup: bool = False) -> None: ...  # in the test process, last step
    def scratch_mounts(self, cwd: str) -> list[str]: ...  # where the job writes (checked for a full disk)


class NamespaceSandbox:
    kind = "namespaced"
    reads_ram_view = True  # its read-only folders can show the executor's RAM view (ram_view.py)
    private_root = True
    links_programs = True
    drops_privileges = True
    pid_namespace = True

    def __init__(self) -> None:
        self.root: str | None = None
        self.plugin_dir = ""  # nothing to add: the network namespace has no network
        self._own_pid_ns: int | None = None
        self.builds_workspace = True
        self._scratch: Path | None = None
        self._hide: list[str] = []
        self._constant_proc: list[tuple[str, str]] = []
        self._empty = Path("/nonexistent")
        self.shared_views: list[str] = []  # the read-only overlays of host folders (pagecache.py watches them)
        self._fresh: list[tuple[str, str, str]] = []  # (host, RAM view copy, target): overlaid again per job
        self._own_mounts = False  # (in a keeper) fork_job gave it a mount namespace of its own

    def launch_prefix(self) -> list[str]:
        return ["unshare", "--net", "--mount", "--ipc", "--uts", "--propagation", "private", "--"]

    def setup_server(self, server_dir: Path) -> None:
        loopback_up()
        root = server_dir / "root"
        root.mkdir(parents=True, exist_ok=True)
        mount("tmpfs", str(root), "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=16m")
        mounted = []
        view = private_scratch(server_dir / "machine-view")
        self._empty = view / "empty"  # the overlays' second (empty) lower layer
        for name in ("usr", "bin", "sbin", "lib", "lib32", "lib64", "etc"):
            host = Path("/") / name
            if host.is_symlink():
                os.symlink(os.readlink(host), root / name)
            elif host.is_dir():
                (root / name).mkdir()
                self._show(str(host), str(root / name))
                mounted.append(str(host))
        for prefix in _python_prefixes():
            (root / prefix.lstrip("/")).mkdir(parents=True, exist_ok=True)
            self._show(prefix, str(root / prefix.lstrip("/")))
            mounted.append(prefix)
        self._hide = paths_from_env()  # the project's own files and data (masking.py)
        mask(str(root), self._hide, mounted)
        dev = root / "dev"
        dev.mkdir()
        mount("tmpfs", str(dev), "tmpfs", MS_NOSUID, "mode=0755,size=64k")
        for node in ("null", "zero", "full", "random", "urandom"):
            # Nodes of this server's own (not binds of the host's): a lock on /dev/null is then
            # seen by no other server's job.
            os.mknod(dev / node, 0o666 | stat.S_IFCHR, os.stat(f"/dev/{node}").st_rdev)
            os.chmod(dev / node, 0o666)
        for link, to in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                         ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
            os.symlink(to, dev / link)
        (dev / "shm").mkdir()
        for d in ("proc", "tmp", INSIDE_WORKSPACE.lstrip("/")):
            (root / d).mkdir(parents=True, exist_ok=True)  # /tmp exists already for a venv under /tmp
        self.root = str(root)
        self._own_pid_ns = os.open("/proc/self/ns/pid", os.O_RDONLY)
        self._scratch = server_dir / "scratch"  # each job mounts its own tmpfs here
        self._constant_proc = write_constant_proc(view / "proc")
        self._scratch.mkdir(exist_ok=True)
        # TESTHELIX_OVERLAY=0 (passed on by the executor) keeps hard-linked workspaces.
        wants_overlay = os.environ.get(OVERLAY_ENV) != "0"
        self.builds_workspace = not (wants_overlay and overlay_supported(server_dir / "overlay-probe"))

    def _show(self, host: str, target: str) -> None:
        """Mount the read-only view of a host folder: its copy in the RAM view where the executor
        made one (ram_view.py), else the host folder, whose reads the server then forgets after
        each job (pagecache.py watches it)."""
        lower = lower_for(host)
        if view_readonly(lower, target, self._empty) and lower == host:
            self.shared_views.append(target)
        elif lower != host:
            self._fresh.append((host, lower, target))

    def fork_job(self) -> int:
        """Fork PID 1 of a fresh PID namespace, without leaving the caller's own (jobprocess.py).
        (This saves a process per job: an extra monitor process used to do the unshare.)"""
        assert self._own_pid_ns is not None, "setup_server was not called"
        pid = fork_as_pid1(self._own_pid_ns)
        if pid == 0:
            # A network namespace of the job's own, with its own loopback: suites that serve on
            # 127.0.0.1:<port> work in parallel jobs, and no job can plant a listener for another.
            # Done here, in a keeper forked ahead of its job, so it costs the job no time.
            unshare(CLONE_NEWNET)
            loopback_up()
            if not self.builds_workspace:  # (a linked workspace is mounted in the server's namespace
                self._fresh_views()  # after this fork: then enter_job makes them, once it is there)
        return pid

    def _fresh_views(self, unshared: bool = False) -> None:
        """Overlays of the RAM view of this job's own, stacked over the server's: an overlay
        caches the dentries of every lookup made through it, a name that exists nowhere included,
        so through the server's overlays the next job's `stat` timing would tell which names this
        job looked up. Made in the keeper, ahead of its job (a mount namespace and a few mounts)."""
        if not self._fresh:
            return
        if not unshared:
            unshare(CLONE_NEWNS)
        for _host, lower, target in self._fresh:
            view_readonly(lower, target, self._empty)
        assert self.root is not None
        mask(self.root, self._hide, [host for host, _lower, _target in self._fresh])  # covered again
        self._own_mounts = True

    def enter_job(self, workspace: Path | Layers, limits: Limits) -> str:
        assert self.root is not None and self._scratch is not None, "setup_server was not called"
        root = self.root
        # PID 1 of the job: mounts and IPC of its own; a cgroup namespace rooted at the job's cgroup
        # (the keeper is in it by now), so /proc/self/cgroup shows "/" and names nothing.
        unshare((0 if self._own_mounts else CLONE_NEWNS) | CLONE_NEWIPC | CLONE_NEWCGROUP)
        if not self._own_mounts:
            self._fresh_views(unshared=True)
        target = root + INSIDE_WORKSPACE
        if isinstance(workspace, Layers):
            # Writes to the workspace land in RAM: cap them like a few maximum-size files.
            mount_layers(workspace, target, self._scratch, max(64, limits.fsize_mb * 4), MS_NOSUID | MS_NODEV)
        else:
            mount(str(workspace), target, None, MS_BIND)
            mount(None, target, None, MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NODEV)
        mount_fresh_temp(root, max(16, limits.fsize_mb * 2))
        for prefix in _python_prefixes():
            # A Python installation under /tmp (a CI checkout's virtualenv) was just hidden by the
            # job's private /tmp: bind it again, read-only, so imports keep working.
            if prefix.startswith("/tmp/"):
                os.makedirs(root + prefix, exist_ok=True)
                view_readonly(lower_for(prefix), root + prefix, self._empty)
                mask(root, self._hide, [prefix])
        mount_own_proc(root)
        hide_machine_counters(root, self._constant_proc)
        os.chroot(root)
        return INSIDE_WORKSPACE

    def confine(self, limits: Limits, uid: int, cgroup: bool = False) -> None:
        become_user(uid)
        prctl(PR_SET_NO_NEW_PRIVS, 1)
        deny_unix_sockets()
        apply_rlimits(limits, with_nproc=True, cgroup=cgroup)

    def scratch_mounts(self, cwd: str) -> list[str]:
        return ["/tmp", "/dev/shm", cwd]  # three size-capped tmpfs (the workspace: overlay upper or linked)


class PlainSandbox:
    kind = "plain"
    private_root = False
    pid_namespace = False
    builds_workspace = True
    links_programs = False  # copies: without root the test runs as the cache's owner

    def __init__(self) -> None:
        self.plugin_dir = ""
        # As root (but without namespaces) we can still drop to a dedicated uid: then the test
        # cannot write root-owned files, signal the harness, or escape RLIMIT_NPROC, and its
        # leftover processes can be found by uid and killed.
        self.drops_privileges = os.geteuid() == 0

    def launch_prefix(self) -> list[str]:
        return []

    def setup_server(self, server_dir: Path) -> None:
        plugin = server_dir / PLUGIN_DIR_NAME
        write_plugin_dir(plugin)
        self.plugin_dir = str(plugin)

    def fork_job(self) -> int:
        return os.fork()

    def enter_job(self, workspace: Path | Layers, limits: Limits) -> str:  # noqa: ARG002 - the Sandbox protocol's signature
        assert isinstance(workspace, Path), "the plain sandbox runs in a built workspace"
        return str(workspace)

    def confine(self, limits: Limits, uid: int, cgroup: bool = False) -> None:
        install_network_block()
        if self.drops_privileges:
            become_user(uid)
        prctl(PR_SET_NO_NEW_PRIVS, 1)
        deny_unix_sockets()
        # RLIMIT_NPROC counts every process of the real uid, harness included, so it is only
        # meaningful with a dedicated uid.
        apply_rlimits(limits, with_nproc=self.drops_privileges, cgroup=cgroup)

    def scratch_mounts(self, cwd: str) -> list[str]:
        return [cwd]


def _python_prefixes() -> list[str]:
    """The Python installation the sandbox needs, outside /usr: base prefix and virtualenv."""
    out: list[str] = []
    # A server under a task environment (environments.py) also needs the harness's own prefix.
    host = [os.environ[HOST_PREFIX_ENV], os.path.realpath(os.environ[HOST_PREFIX_ENV])] if os.environ.get(HOST_PREFIX_ENV) else []
    for p in (sys.base_prefix, sys.prefix, os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix), *host):
        if p.startswith("/usr/") or p == "/usr" or p in out:
            continue
        if any(p.startswith(q + "/") for q in out):
            continue
        out = [q for q in out if not q.startswith(p + "/")] + [p]
    return out


@lru_cache(maxsize=1)
def namespaces_available() -> bool:
    """Root, util-linux unshare, and the kernel lets us create every namespace we use."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        return False
    probe = ["unshare", "--net", "--mount", "--ipc", "--uts", "--pid", "--fork", "--propagation", "private",
             "true"]
    try:
        return subprocess.run(probe, capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False

