"""The fork server: a supervisor, and a clean zygote (zygote.py) from which every job is forked.

Started by the executor (`python -m testhelix.execution.forkserver ...`) already inside the sandbox's
outer isolation (for the namespaced sandbox: new network / mount / IPC / UTS namespaces), with an
allow-listed environment, so its memory never held the host's secrets. It speaks one JSON object
per line on stdin/stdout; every other output of its own goes to a log file.

After start-up (sandbox root, pytest imported and warmed up, see pytest_warm.py) the process forks
once: the ZYGOTE, which from then on only forks. The supervisor does everything else.

    supervisor ── socket ──► zygote ──fork──► keeper (PID 1 of a new PID namespace)
      reads job lines                          reads its job spec from a pipe, mounts the
      (digests + limits only),                 workspace, chroots, forks the test process,
      lists cached trees, makes                reaps orphans, writes the test's exit status
      the job's cgroup, watches                and full-tmpfs findings to the status pipe
      the clock, reads output                  └─fork──► test process: new session, stdio to the
                                                          output pipe, sandbox uid, rlimits,
                                                          seccomp, runs pytest.main in-process
                                                          (or execs the suite's run_tests.sh)

Why a zygote: a child inherits its parent's memory. The zygote never receives a job spec, never
reads a tree, an output, or a verdict -- per job it gets only the descriptors of four pipes -- so
a test that scans its own memory finds pytest and its own job, never another job's files, output
or labels. (Trees are compiled on the host side, in a helper process; see executor.py.) The job
spec itself names trees by digest only and comes through a pipe the keeper reads after the fork.

Pipelining (what keeps the hops cheap): each job's keeper is forked and moved into its fresh job
cgroup AHEAD of the job -- right after the previous job's spec is written, so the zygote round trip
and the cgroup migration (in v1 it waits for an RCU grace period, ~10 ms) overlap the previous job.
A waiting keeper is a clean fork of the zygote in an empty cgroup, blocked on its spec pipe; a job
with other memory/process limits gets a new one. The supervisor replies as soon as the keeper
reported the test's exit and the output closed; the keeper's own exit (tearing down the job's
namespaces) and the cgroup's removal overlap the next job.

Verdict: the supervisor takes the test's exit status as the keeper observed it, its own clock, and
the job's cgroup counters. The test process holds no descriptor of any of these channels: the
status pipe is closed in it, and the one-byte "set-up done" pipe is closed before suite code runs.
With the plain sandbox the keeper is an ordinary process (no PID namespace).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import secrets
import select
import signal
import socket
import struct
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path

from testhelix.execution.cgroup import Cgroups, JobCgroup
from testhelix.execution.jobprocess import die_with_parent, end_leftovers_of
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
from testhelix.execution.precompile import asks_for_pass_hook, is_rewritten_pyc
from testhelix.execution.pytest_warm import ConfigTemplate, warm_up
from testhelix.execution.sandbox import Sandbox
from testhelix.execution.seam import select_sandbox
from testhelix.execution.syscalls import MS_NODEV, MS_NOSUID, mount, umount
from testhelix.execution.workspace import (
    SUITE_SUBDIR,
    build_workspace,
    force_rmtree,
    listing,
    tree_bytes,
    tree_module_names,
)
from testhelix.execution.zygote import Job, Zygote, zygote_loop


# ----------------------------------------------------------------------------- supervisor
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
        started = time.monotonic()
        # The keeper's own exit (its namespaces torn down) overlaps the reply and the next job;
        # after_reply waits for it before it removes the job's cgroup.
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
                                                             limits.output_bytes)
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


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="TestPrism fork server (started by the executor); its settings come "
                                 "as the first line on stdin, so that its command line (which every job "
                                 "inherits in /proc/self/cmdline) names no host folder")
    ap.parse_args(argv)
    first_line = b""
    while not first_line.endswith(b"\n"):  # unbuffered: job lines that follow stay in the pipe
        byte = os.read(0, 1)
        if not byte:
            break
        first_line += byte
    settings = json.loads(first_line)
    args = argparse.Namespace(dir=Path(settings["dir"]), staging=Path(settings["staging"]), uids=settings["uids"],
                              kind=settings["kind"], keep_modules=Path(settings["keep_modules"]))
    proto_in = os.fdopen(os.dup(0), "rb")
    proto_out = os.fdopen(os.dup(1), "wb")
    log = os.open(args.dir / "server.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)

    def send(obj: dict) -> None:
        proto_out.write(json.dumps(obj).encode() + b"\n")
        proto_out.flush()

    try:
        sandbox = select_sandbox(args.kind)
        sandbox.setup_server(args.dir)
        warm_up(args.dir)
        template = ConfigTemplate.build()
        keep = frozenset(json.loads(args.keep_modules.read_text()))
        cgroups = Cgroups.detect()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    except BaseException:  # noqa: BLE001
        send({"ready": False, "error": traceback.format_exc(limit=5)})
        return
    gc.collect()
    gc.freeze()  # children share the heap pages instead of copying them on the next collection
    sys.stdout.flush()
    sys.stderr.flush()
    zygote = os.fork()
    if zygote == 0:
        try:
            ours.close()
            proto_in.close()
            proto_out.close()
            die_with_parent()
            del args, keep, cgroups
            zygote_loop(Zygote(sandbox, template), theirs)
        finally:
            os._exit(0)
    theirs.close()
    first, count = (int(x) for x in args.uids.split(":"))
    server = Server(sandbox, args.dir, args.staging, (first, count), ours, keep, cgroups)
    server.prepare(Limits())  # the first job's keeper
    send({"ready": True, "kind": sandbox.kind, "cgroups": cgroups.kind})
    for line in proto_in:
        limits = None
        try:
            job = json.loads(line)
            limits = Limits(**job["limits"])
            result = server.handle(job)
        except BaseException:  # noqa: BLE001
            result = {"fault": "server: " + traceback.format_exc(limit=3)}
        send(result)
        server.after_reply(limits)
    server.close()


if __name__ == "__main__":
    main()
