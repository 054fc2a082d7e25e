"""The set-up of one job's process, shared by every fork-per-job runner in the project.

Two runners fork one fresh process per unit of untrusted work from a clean zygote: the executor's
fork server (zygote.py: a keeper and a test process per pytest job) and GTDD's trace isolation
(gtdd/isolation/zygote.py, run as a file inside the sandbox: a worker per trace). What each does
to give a job a clean, confined process is the same concept in both, so it lives here once:

    step                                  executor (zygote.py / sandbox.py)   GTDD (isolation/zygote.py)
    die with the parent                   keeper; plain test process          batch PID 1
    fork as PID 1 of a new PID namespace  NamespaceSandbox.fork_job (keeper)  one worker per trace
    fresh private /tmp and /dev/shm       NamespaceSandbox.enter_job          worker, own mount namespace
    a /proc of the job's PID namespace    NamespaceSandbox.enter_job          worker
    stdio to a pipe or nowhere            test process                        worker
    only the job's own descriptors open   test process                        worker
    become the sandbox uid                Sandbox.confine (then rlimits)      Sandbox.confine
    end a plain job's leftovers by uid    forkserver supervisor               zygote after each trace

What stays apart on purpose: the executor's keeper, cgroups and wall clock; GTDD's CPU-time limits
(ITIMER_PROF and RLIMIT_CPU), its splice(2) of the worker's record and its zygote per batch.

This module imports only the standard library and syscalls.py: GTDD's zygote imports it inside
the sandbox (with `python -s -P`), before any candidate code runs.
"""

from __future__ import annotations

import os
import shutil
import signal

from testhelix.execution.syscalls import (
    CLONE_NEWPID,
    MS_NODEV,
    MS_NOEXEC,
    MS_NOSUID,
    PR_SET_PDEATHSIG,
    mount,
    prctl,
    setns,
    unshare,
)

LOST_PID_NAMESPACE_EXIT = 70  # the caller could not return to its own PID namespace: it ends itself


def die_with_parent() -> None:
    """SIGKILL this process when the one that forked it exits (a job never outlives its zygote)."""
    prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def fork_as_pid1(own_pid_ns: int) -> int:
    """os.fork() whose child is PID 1 of a fresh PID namespace; the caller stays in its own.

    `own_pid_ns` is a descriptor of the caller's /proc/self/ns/pid, opened once beforehand.
    unshare(CLONE_NEWPID) only changes where the caller's *next* child goes, and cannot be repeated
    while that differs from the caller's own namespace: so it is set back right after the fork. A
    caller that cannot set it back would put every later job in the wrong namespace, so it exits
    (LOST_PID_NAMESPACE_EXIT) instead; its owner sees a harness fault and starts a fresh one.
    """
    unshare(CLONE_NEWPID)
    pid = -1
    try:
        pid = os.fork()
    finally:
        if pid != 0:  # the parent, or a fork that failed
            try:
                setns(own_pid_ns, CLONE_NEWPID)
            except OSError:
                os._exit(LOST_PID_NAMESPACE_EXIT)
    return pid


def mount_fresh_temp(root: str, size_mb: int) -> None:
    """Empty, size-capped tmpfs on ROOT/tmp and ROOT/dev/shm; call in the job's own mount namespace
    (root "" is the current root)."""
    opts = f"mode=1777,size={size_mb}m"
    mount("tmpfs", root + "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, opts)
    mount("tmpfs", root + "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, opts)


def mount_own_proc(root: str) -> None:
    """A /proc that shows the job's PID namespace only (nothing of the harness or other jobs)."""
    mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)


def stdio_to(out_fd: int | None) -> None:
    """stdin empty; stdout and stderr to `out_fd` (None: nowhere). `out_fd` itself stays open."""
    null = os.open(os.devnull, os.O_RDWR if out_fd is None else os.O_RDONLY)
    os.dup2(null, 0)
    for fd in (1, 2):
        os.dup2(null if out_fd is None else out_fd, fd)
    os.close(null)


def keep_only_fds(fd: int) -> None:
    """Close every descriptor above stdio except `fd`: nothing of the zygote (or another job) stays open."""
    os.closerange(3, fd)
    os.closerange(fd + 1, 1 << 16)


def become_user(uid: int) -> None:
    """Drop to the sandbox uid (same gid, no supplementary groups); irreversible."""
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)


def end_leftovers_of(uid: int) -> None:
    """Plain fallback (no PID namespace ends a job's processes): kill what the sandbox uid still
    runs, then delete what it left in the shared temporary folders."""
    kill_uid(uid)
    remove_files_of(uid)


def remove_files_of(uid: int, roots: tuple[str, ...] = ("/tmp", "/var/tmp", "/dev/shm")) -> None:
    """Delete what `uid` left in the world-writable shared folders `roots`."""
    for root in roots:
        try:
            entries = os.listdir(root)
        except OSError:
            continue
        for name in entries:
            path = os.path.join(root, name)
            try:
                if os.lstat(path).st_uid != uid:
                    continue
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path, ignore_errors=True)
                else:
                    os.unlink(path)
            except OSError:
                continue


def kill_uid(uid: int, rounds: int = 20) -> int:
    """SIGKILL every process owned by `uid` (found through /proc); repeat while new ones appear."""
    killed = 0
    for _ in range(rounds):
        found = 0
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                if os.stat(f"/proc/{entry}").st_uid != uid:
                    continue
                os.kill(int(entry), 9)
                found += 1
            except (OSError, ValueError):
                continue
        killed += found
        if not found:
            break
    return killed
