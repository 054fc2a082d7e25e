"""Run an imported task's script (Harbor `solution/solve.sh`) inside the sandbox, never on the host.

`run_script(script, work, mounts)` starts this module as a helper inside fresh network, mount, IPC,
UTS and PID namespaces (util-linux `unshare`, as the fork server is started). The helper builds the
same minimal read-only root as the executor's namespaced sandbox (sandbox.py), binds the private
copy `work` read-write at `/app` (Harbor's working folder) and every other mount read-only at its
Harbor path (e.g. the task's `solution/` at `/solution`), gives the script a private `/tmp`,
chroots there, drops to an unprivileged uid with the executor's rlimits, and executes the script
under the interpreter its shebang names (`/bin/sh` when it has none). Writes anywhere but `/app`
land in a throw-away tmpfs or fail; the host's files are not reachable by any path.

Without namespaces (the plain fallback) nothing runs: the caller gets a refusal.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import testhelix
from testhelix.core.errors import UserError
from testhelix.execution.outcome import Limits
from testhelix.execution.sandbox import NamespaceSandbox, namespaces_available, sandbox_env
from testhelix.execution.syscalls import MS_BIND, MS_NODEV, MS_NOEXEC, MS_NOSUID, bind_readonly, mount

SCRIPT_UID = 4_950_000
APP = "/app"


@dataclass(frozen=True)
class ScriptRun:
    exit_code: int | None  # None: killed (timeout or signal)
    output: str
    timed_out: bool


def shebang(script: Path) -> list[str]:
    """argv prefix from the script's `#!` line; `/bin/sh` when it has none."""
    first = Path(script).read_bytes().split(b"\n", 1)[0]
    if not first.startswith(b"#!"):
        return ["/bin/sh"]
    words = shlex.split(first[2:].decode("utf-8", "replace"))
    return words or ["/bin/sh"]


def run_script(script: Path, inside: str, work: Path, mounts: dict[str, Path], timeout_s: float = 300,
               args: tuple[str, ...] = ()) -> ScriptRun:
    """Run `script` (a host file; `inside` is its path in the sandbox, e.g. /solution/solve.sh) on
    the private copy `work`, mounted at /app. `mounts`: sandbox path -> host folder (read-only)."""
    if not namespaces_available():
        raise UserError("running a task's script needs the namespaced sandbox (root and util-linux unshare); "
                        "refusing to run it on the host")
    spec = {"script": inside, "interpreter": shebang(script), "work": str(Path(work).resolve()), "args": list(args),
            "mounts": {k: str(Path(v).resolve()) for k, v in mounts.items()}, "timeout_s": timeout_s}
    package_parent = str(Path(testhelix.__file__).resolve().parent.parent)
    with tempfile.TemporaryDirectory(prefix="testhelix-script-") as tmp:
        env = sandbox_env(home=tmp, tmp=tmp, pythonpath=package_parent)
        argv = ["unshare", "--net", "--mount", "--ipc", "--uts", "--pid", "--fork", "--propagation", "private", "--",
                sys.executable, "-s", "-m", "testhelix.importers.script_sandbox", "--dir", tmp, "--spec", json.dumps(spec)]
        try:
            run = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout_s + 60,
                                 stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return ScriptRun(None, "the sandbox helper did not finish", True)
    try:
        reply = json.loads(run.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        raise UserError(f"{script}: the sandbox helper failed: {run.stderr.strip()[-300:]}") from None
    return ScriptRun(reply["exit_code"], reply["output"], reply["timed_out"])


# ----------------------------------------------------------------------------- inside the namespaces
def _chown_tree(root: str, uid: int) -> None:
    for d, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            os.lchown(os.path.join(d, name), uid, uid)
    os.lchown(root, uid, uid)


def _helper(server_dir: Path, spec: dict) -> dict:
    sandbox = NamespaceSandbox()
    sandbox.setup_server(server_dir)
    root = sandbox.root
    assert root is not None
    work = spec["work"]
    _chown_tree(work, SCRIPT_UID)
    try:
        os.makedirs(root + APP)
        mount(work, root + APP, None, MS_BIND)
        for inside, host in spec["mounts"].items():
            os.makedirs(root + inside, exist_ok=True)
            bind_readonly(host, root + inside)
        mount("tmpfs", root + "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=64m")
        mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        out_r, out_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(out_r)
                os.chroot(root)
                os.chdir(APP)
                os.dup2(out_w, 1)
                os.dup2(out_w, 2)
                os.setsid()
                sandbox.confine(Limits(wall_s=spec["timeout_s"], cpu_s=int(spec["timeout_s"]) + 1, nproc=256,
                                       fsize_mb=256, memory_mb=2048), SCRIPT_UID)
                env = sandbox_env(home="/tmp", tmp="/tmp", pythonpath=APP)
                argv = [*spec["interpreter"], spec["script"], *spec["args"]]
                os.execve(argv[0] if argv[0].startswith("/") else "/usr/bin/env",
                          argv if argv[0].startswith("/") else ["env", *argv], env)
            finally:
                os._exit(127)
        os.close(out_w)
        output, timed_out, status = _collect(out_r, pid, spec["timeout_s"])
    finally:
        _chown_tree(work, 0)  # the caller (root on the host) owns its copy again
    code = os.WEXITSTATUS(status) if status is not None and os.WIFEXITED(status) else None
    return {"exit_code": code, "output": output[-4000:], "timed_out": timed_out}


def _collect(fd: int, pid: int, timeout_s: float) -> tuple[str, bool, int | None]:
    import select

    deadline, chunks, timed_out = time.monotonic() + timeout_s, [], False
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            os.kill(pid, signal.SIGKILL)
            break
        if select.select([fd], [], [], left)[0]:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return b"".join(chunks).decode("utf-8", "replace"), timed_out, None if timed_out else status


def main() -> None:
    ap = argparse.ArgumentParser(description="run one task script in the sandbox (started by run_script)")
    ap.add_argument("--dir", required=True, type=Path)
    ap.add_argument("--spec", required=True)
    args = ap.parse_args()
    try:
        reply = _helper(args.dir, json.loads(args.spec))
    except OSError as exc:
        reply = {"exit_code": None, "output": f"sandbox set-up failed: {exc}", "timed_out": False}
    print(json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
