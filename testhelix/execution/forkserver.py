"""The fork server: a supervisor, and a clean zygote (zygote.py) from which every job is forked.

Started by the executor (`python -m testhelix.execution.forkserver ...`) already inside the sandbox's
outer isolation (for the namespaced sandbox: new network / mount / IPC / UTS namespaces), with an
allow-listed environment, so its memory never held the host's secrets. It speaks one JSON object
per line on stdin/stdout; every other output of its own goes to a log file.

After start-up (sandbox root, pytest imported and warmed up, see pytest_warm.py) the process forks
once: the ZYGOTE, which from then on only forks. The supervisor does everything else. This module
is the start-up and the job-line loop; the supervisor's work per job is in supervisor.py, the
keepers it forks ahead in keepers.py, the zygote, keeper and test process in zygote.py.

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
import socket
import sys
import traceback
from pathlib import Path

from testhelix.execution.cgroup import Cgroups
from testhelix.execution.jobprocess import die_with_parent
from testhelix.execution.outcome import Limits
from testhelix.execution.pytest_warm import ConfigTemplate, warm_up
from testhelix.execution.seam import select_sandbox
from testhelix.execution.supervisor import Server
from testhelix.execution.zygote import Zygote, zygote_loop


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
