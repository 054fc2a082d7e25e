"""The fork server's supervisor: one job from its JSON line to its verdict.

See forkserver.py for the whole picture; that module starts the server (sandbox, warm-up, the
zygote fork) and feeds this one job line at a time. Per job the supervisor looks up the job's
cached trees, builds or layers its workspace, takes a keeper forked ahead of the job (keepers.py),
writes the keeper its spec, enforces the wall clock, and reads the test's exit status and the job
cgroup's counters into the raw result the executor classifies. It never forks a job itself: the
zygote (zygote.py) does, so no job inherits the supervisor's memory.
"""

from __future__ import annotations

import os
import secrets
import select
import signal
import socket
import struct
import sys
import time
from collections.abc import Callable
from pathlib import Path

from testhelix.execution.cgroup import Cgroups, JobCgroup
from testhelix.execution.jobprocess import end_leftovers_of
from testhelix.execution.keepers import (
    STATUS_BYTES,
    WaitingKeeper,
    cgroup_limits,
    close_quietly,
    ended,
    kill_pidfd,
    watch_job,
)
from testhelix.execution.outcome import Limits
from testhelix.execution.overlay import Layers
from testhelix.execution.pagecache import ReadFiles
from testhelix.execution.precompile import asks_for_pass_hook, is_rewritten_pyc
from testhelix.execution.sandbox import Sandbox
from testhelix.execution.syscalls import MS_NODEV, MS_NOSUID, mount, umount
from testhelix.execution.workspace import (
    SUITE_SUBDIR,
    build_workspace,
    force_rmtree,
    listing,
    tree_bytes,
    tree_module_names,
)
from testhelix.execution.zygote import Job


class Server:
    def __init__(self, sandbox: Sandbox, server_dir: Path, staging: Path, uids: tuple[int, int],
                 zygote: socket.socket, keep: frozenset[str], cgroups: Cgroups):
        self.sandbox, self.server_dir, self.zygote = sandbox, server_dir, zygote
        self.uids = uids  # (first, how many): this pool's range, disjoint from every other pool's
        self.trees = staging / "trees"
        self.keep, self.cgroups = keep, cgroups
        self.zygote_modules = tuple(sys.modules)  # what the zygote has imported (it forked from here)
        self.ws_root = server_dir / "ws"
        self.ws_root.mkdir(parents=True, exist_ok=True)
        self.count = 0
        self._keepers = 0
        self._next: WaitingKeeper | None = None  # forked ahead of the next job (see prepare)
        # Jobs that reported: (keeper pidfd, cgroup), cleaned up once the keeper has exited.
        self._finished: list[tuple[int, JobCgroup | None]] = []
        self._facts: dict[str, tuple] = {}
        # Made after the zygote's fork: no job or keeper ever holds this descriptor.
        self.read_files = ReadFiles.watch(getattr(sandbox, "shared_views", []))

    def _tree_facts(self, digest: str, suite_digest: str) -> tuple:
        """(cached path, listing, module names, asks for the pass hook, bytes) of a cached tree, read once.

        Module names: the top level of a program; every file and folder name of a suite (pytest puts
        each test folder without __init__.py on sys.path)."""
        if digest not in self._facts:
            tree = self.trees / digest
            if not tree.is_dir():
                raise FileNotFoundError(f"tree {digest} is not in the cache")
            self._facts[digest] = (tree, listing(tree), tree_module_names(tree, anywhere=digest == suite_digest),
                                   asks_for_pass_hook(tree), tree_bytes(tree))
        return self._facts[digest]

    def handle(self, job: dict) -> dict:
        limits = Limits(**job["limits"])
        entry = job["entry"]
        program, p_listing, p_names, p_hook, p_bytes = self._tree_facts(job["program"], job["suite"])
        suite, s_listing, s_names, s_hook, s_bytes = self._tree_facts(job["suite"], job["suite"])
        hide = is_rewritten_pyc if p_hook or s_hook else None
        shadow = (p_names | s_names) - self.keep
        forget = tuple(m for m in self.zygote_modules if m.split(".", 1)[0] in shadow)
        self.count += 1
        # Drawn per job, so nothing a job can see (its uid, its folder) follows its position.
        uid = self.uids[0] + secrets.randbelow(self.uids[1])
        name = secrets.token_hex(8)
        workspace: Path | Layers
        if self.sandbox.builds_workspace:
            workspace = self.ws_root / name
        else:
            workspace = self._layers(program, suite, p_listing, s_listing, hide, uid)
        mounted, keeper = False, None
        try:
            if isinstance(workspace, Path):
                mounted = self._workspace_tmpfs(workspace, limits, p_bytes + s_bytes)
                owner = uid if self.sandbox.drops_privileges else None
                link = self.sandbox.links_programs and not mounted  # hard links cannot cross into a tmpfs
                build_workspace(workspace, program, suite, link, owner, hide or _hide_nothing)
            try:
                keeper = self._take_keeper(limits)
            except OSError as exc:
                raw = {"fault": f"could not start the job: {exc}"}
            else:
                raw = self._execute(Job(workspace, entry, forget, limits, uid, keeper.cg is not None), keeper)
        except OSError as exc:
            raw = {"fault": f"workspace: {exc}"}
        finally:
            if isinstance(workspace, Path):
                if mounted:
                    _try_umount(workspace)
                force_rmtree(workspace)
        return {**raw, "entry": "script" if entry == "script" else "pytest"}  # how to classify it

    # -- keepers forked ahead of their job ------------------------------------------------------------
    def prepare(self, limits: Limits) -> None:
        """Fork the next job's keeper now, while the current job runs or the executor is busy.

        The zygote round trip and the move into a new job cgroup (a cgroup v1 migration waits for
        an RCU grace period, ~10 ms) are then off the next job's critical path. What waits is a
        clean fork of the zygote in an empty cgroup, blocked reading a spec pipe: it holds nothing
        of any job until its own spec is written. Never raises; on failure the job starts one itself.
        """
        if self._next is not None:
            return
        try:
            self._next = self._start_keeper(limits)
        except (OSError, RuntimeError):
            self._next = None

    def _take_keeper(self, limits: Limits) -> WaitingKeeper:
        keeper, self._next = self._next, None
        if keeper is not None and (keeper.cgroup_limits != cgroup_limits(limits) or ended(keeper.pidfd)):
            self._discard(keeper)  # made for other memory/process limits, or it died waiting
            keeper = None
        return keeper if keeper is not None else self._start_keeper(limits)

    def _start_keeper(self, limits: Limits) -> WaitingKeeper:
        self._keepers += 1
        cg = self.cgroups.create(secrets.token_hex(12), limits)  # random: its name says nothing of order
        spec_r, spec_w = os.pipe()
        out_r, out_w = os.pipe()
        st_r, st_w = os.pipe()
        try:
            pid, pidfd = self._fork_keeper(spec_r, out_w, st_w)
        except BaseException:
            for fd in (spec_w, out_r, st_r):
                os.close(fd)
            if cg is not None:
                cg.remove()
            raise
        finally:
            for fd in (spec_r, out_w, st_w):
                os.close(fd)
        keeper = WaitingKeeper(pidfd, spec_w, out_r, st_r, cg, cgroup_limits(limits))
        if cg is not None:
            try:
                cg.add(pid)  # before the spec: nothing of the job runs outside its cgroup
            except OSError:
                self._discard(keeper)
                raise
        return keeper

    def _discard(self, keeper: WaitingKeeper) -> None:
        """End a keeper that never got a job (it holds nothing), and remove its cgroup."""
        kill_pidfd(keeper.pidfd)
        select.select([keeper.pidfd], [], [], 5.0)
        for fd in (keeper.spec_w, keeper.out_r, keeper.st_r, keeper.pidfd):
            close_quietly(fd)
        if keeper.cg is not None:
            keeper.cg.kill_all()
            keeper.cg.remove()

    def after_reply(self, limits: Limits | None = None, wait: bool = False) -> None:
        """Clean-up of finished jobs whose keeper has exited (of all, waiting for them, with `wait`):
        their cgroups go. Then a keeper is forked for the next job if none is waiting."""
        still = []
        for pidfd, cg in self._finished:
            if not (select.select([pidfd], [], [], 5.0 if wait else 0)[0] or wait):
                still.append((pidfd, cg))  # its namespaces are still being torn down
                continue
            os.close(pidfd)
            if cg is not None:
                cg.kill_all()
                cg.remove()
        self._finished = still
        if limits is not None:
            self.prepare(limits)

    def close(self) -> None:
        self.after_reply(wait=True)
        if self._next is not None:
            self._discard(self._next)
            self._next = None

    def _workspace_tmpfs(self, ws: Path, limits: Limits, tree_bytes: int) -> bool:
        """Namespaced linked mode: the workspace is a size-capped tmpfs of its own (private to the
        server's mount namespace), so a job never writes to the host's disk."""
        if not self.sandbox.private_root:
            return False
        ws.mkdir()
        size_mb = max(64, limits.fsize_mb * 4) + tree_bytes // (1 << 20) + 1  # the copies + what the job may write
        mount("tmpfs", str(ws), "tmpfs", MS_NOSUID | MS_NODEV, f"mode=0755,size={size_mb}m")
        return True

    def _layers(self, program: Path, suite: Path, p_listing: tuple, s_listing: tuple,
                hide: Callable[[str], bool] | None, uid: int) -> Layers:
        (program_folders, program_files), (suite_folders, suite_files) = p_listing, s_listing
        hidden: list[str] = []
        if hide is not None:
            hidden = [rel for rel in program_files if hide(os.path.basename(rel))
                      and not rel.startswith(SUITE_SUBDIR + "/")]  # the suite's own overlay covers those
            hidden += [f"{SUITE_SUBDIR}/{rel}" for rel in suite_files if hide(os.path.basename(rel))]
        return Layers(program, suite, program_folders, suite_folders, uid, tuple(hidden))

    def _fork_keeper(self, spec_r: int, out_w: int, st_w: int) -> tuple[int, int]:
        socket.send_fds(self.zygote, [b"j"], [spec_r, out_w, st_w])
        msg, fds, _, _ = socket.recv_fds(self.zygote, 16, 1)
        if len(msg) != 4 or len(fds) != 1:
            raise RuntimeError("zygote did not fork")
        return struct.unpack("i", msg)[0], fds[0]

    def _execute(self, job: Job, keeper: WaitingKeeper) -> dict:
        """Start the job on its keeper, enforce its wall clock, collect its output and exit status."""
        limits, cg = job.limits, keeper.cg
        out_r, st_r, pidfd = keeper.out_r, keeper.st_r, keeper.pidfd
        # The previous keeper's exit (its namespaces torn down, every process it left killed)
        # overlapped the reply; it must be complete before this job starts: a leftover of that job
        # could otherwise hold a lock or a watch that this one sees. after_reply removes its cgroup.
        for earlier, _ in self._finished:
            select.select([earlier], [], [], 5.0)
        if self.read_files is not None:
            self.read_files.drop()  # what the previous job read of the host's files is cold again
        started = time.monotonic()
        self._finished.append((pidfd, cg))
        try:
            with os.fdopen(keeper.spec_w, "wb") as f:
                f.write(job.to_spec())
        except OSError as exc:
            kill_pidfd(pidfd)
            for fd in (out_r, st_r):
                os.close(fd)
            return {"fault": f"could not start the job: {exc}"}
        self.prepare(limits)  # the next job's keeper, while this one runs
        out, total, timed_out, exited, status_bytes = watch_job(out_r, st_r, pidfd, started + limits.wall_s,
                                                             limits.output_bytes, cg.over_limit if cg else None)
        if not exited:
            kill_pidfd(pidfd)  # a keeper that reported already is on its way out: this only makes sure
        status_bytes += _read_exact(st_r, STATUS_BYTES - len(status_bytes))
        test_pid, tail = status_bytes[:4], status_bytes[4:]
        if not self.sandbox.pid_namespace and len(test_pid) == 4:
            _killpg(struct.unpack("i", test_pid)[0])  # leftovers in the test's session
        if not self.sandbox.pid_namespace and self.sandbox.drops_privileges:
            end_leftovers_of(job.uid)  # children that escaped into sessions of their own, their files
        duration = time.monotonic() - started
        for fd in (out_r, st_r):
            os.close(fd)
        text = out.decode("utf-8", errors="replace")
        if total > len(out):
            text = f"[... {total - len(out)} bytes of output truncated ...]\n" + text
        observed = {"timed_out": timed_out, "duration_s": duration, "output": text,
                    "resource": cg.exceeded() if cg is not None else None}
        if timed_out:
            return observed
        if len(tail) != 12:
            # A job that exhausted its cgroup (a fork bomb filling pids.max, memory) can take its keeper
            # down with it: the limit the job hit is then the verdict, not a fault of the harness.
            if observed["resource"] is not None:
                return observed
            return {**observed, "fault": "the job's keeper gave no status"}
        status, set_up, full = struct.unpack("iii", tail)
        if full and observed["resource"] is None:
            observed["resource"] = "disk (a job tmpfs is full)"
        if not set_up and observed["resource"] is None:
            return {**observed, "fault": "set-up of the test process failed: " + text[-300:]}
        if os.WIFSIGNALED(status):
            return {**observed, "signal": os.WTERMSIG(status)}
        return {**observed, "exit_code": os.WEXITSTATUS(status)}


def _read_exact(fd: int, n: int) -> bytes:
    data = b""
    os.set_blocking(fd, True)
    while len(data) < n:
        chunk = os.read(fd, n - len(data))
        if not chunk:
            break
        data += chunk
    return data


def _killpg(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _try_umount(path: Path) -> None:
    try:
        umount(str(path))
    except OSError:
        pass


def _hide_nothing(name: str) -> bool:  # noqa: ARG001 - build_workspace's skip predicate signature
    return False
